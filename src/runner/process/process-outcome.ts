// Turning how a process tool ended into a RunOutcome: one table of reasons,
// the default sentence of each code (errors.ts), and facts in details.
import { constants } from 'node:os';
import { defaultMessage, type ErrorCode, type ErrorDetails, type RunCode } from '../../errors.js';
import type { RunOutcome } from '../run-types.js';
import type { ToolExit } from './spawn.js';

/** Why the host stopped a process before it finished (first one recorded wins). */
export type TerminationReason = 'timeout' | 'cancelled' | 'output_limit' | 'invalid_output';

/** Builds a failed outcome. */
export function failRun(code: RunCode, details: ErrorDetails, startedMs: number, message = defaultMessage(code)): RunOutcome {
  return { ok: false, code, message, details, durationMs: elapsedMs(startedMs) };
}

/** The termination reason a process call reports for its control's stop reason (anything else stops it as a cancel). */
export function asTermination(reason: ErrorCode): TerminationReason {
  return reason === 'timeout' || reason === 'output_limit' || reason === 'invalid_output' ? reason : 'cancelled';
}

/** Milliseconds since `startedMs` (a performance.now() reading). */
export function elapsedMs(startedMs: number): number {
  return Math.round(performance.now() - startedMs);
}

/**
 * Classifies a non-successful exit: a signal, or bubblewrap's 128+N report of
 * one (it exits with 128 + the signal number when the tool died by a signal),
 * is a crash; any other non-zero exit is the tool's own error.
 */
export function classifyFailedExit(exit: ToolExit, stderrTail: string, startedMs: number): RunOutcome {
  if (exit.kind === 'spawn_failed') {
    return failRun('sandbox_unavailable', { reason: 'spawn_failed', errno: exit.errorCode }, startedMs);
  }
  const signal = exit.signal ?? signalFromExitCode(exit.exitCode);
  if (signal !== undefined) {
    return failRun('tool_crashed', { exitCode: exit.exitCode, signal, stderrTail }, startedMs);
  }
  return failRun('tool_error', { exitCode: exit.exitCode, stderrTail }, startedMs);
}

// Signals that mean the tool crashed rather than chose its exit code.
const CRASH_SIGNALS: readonly NodeJS.Signals[] = ['SIGSEGV', 'SIGABRT', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGKILL', 'SIGSYS', 'SIGTRAP', 'SIGTERM', 'SIGXCPU', 'SIGXFSZ'];

function signalFromExitCode(exitCode: number | null): NodeJS.Signals | undefined {
  if (exitCode === null || exitCode <= 128) return undefined;
  const number = exitCode - 128;
  return CRASH_SIGNALS.find((name) => constants.signals[name] === number);
}
