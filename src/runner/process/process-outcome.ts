// Turning how a process tool ended into a RunOutcome: one table of reasons,
// one-sentence messages safe for the model, and facts in details.
import { constants } from 'node:os';
import type { ErrorCode, ErrorDetails, RunCode } from '../../errors.js';
import type { RunOutcome } from '../run-types.js';
import type { ToolExit } from './spawn.js';

/** Why the host stopped a process before it finished (first one recorded wins). */
export type TerminationReason = 'timeout' | 'cancelled' | 'output_limit' | 'invalid_output';

/** Builds a failed outcome. */
export function failRun(code: RunCode, details: ErrorDetails, startedMs: number, message = MESSAGES[code]): RunOutcome {
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

const MESSAGES: Record<RunCode, string> = {
  timeout: 'The tool did not finish within its time limit and was stopped.',
  cancelled: 'The call was cancelled and the tool was stopped.',
  memory_limit: 'The tool exceeded its memory limit.',
  output_limit: 'The tool wrote more output than allowed and was stopped.',
  tool_error: 'The tool failed.',
  tool_crashed: 'The tool crashed.',
  invalid_output: 'The tool produced output that is not valid for its declared format.',
  sandbox_unavailable: 'The sandbox this tool needs is not available on this host.',
  policy_denied: 'The sandbox refused an operation of the tool.',
  internal: 'The host failed while running the tool.',
};

// Signals that mean the tool crashed rather than chose its exit code.
const CRASH_SIGNALS: readonly NodeJS.Signals[] = ['SIGSEGV', 'SIGABRT', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGKILL', 'SIGSYS', 'SIGTRAP', 'SIGTERM', 'SIGXCPU', 'SIGXFSZ'];

function signalFromExitCode(exitCode: number | null): NodeJS.Signals | undefined {
  if (exitCode === null || exitCode <= 128) return undefined;
  const number = exitCode - 128;
  return CRASH_SIGNALS.find((name) => constants.signals[name] === number);
}
