// What the calls of an isolate process that ended, or was ended, are told: its
// broken protocol, V8's fatal out-of-memory, or its exit.
import { constants } from 'node:os';
import { defaultMessage } from '../../errors.js';
import { failure, type Outcome } from '../tool-envelope.js';
import { OUT_OF_MEMORY } from './isolate-start.js';

/** How a process ended, as its exit event gives it. */
export type ProcessExit = { readonly exitCode: number | null; readonly signal: NodeJS.Signals | null };

/** What the host knows of why a process is gone. */
interface ProcessEnd {
  /** Why the host stopped it (`protocol_violation`, `stop_timeout`), if it did. */
  readonly brokenReason: string | undefined;
  readonly memoryMb: number;
  /** The end of its stderr, where V8 writes its fatal out-of-memory report (none while it runs). */
  readonly stderr?: string;
}

/** The outcome of a call the process's end took with it. */
export function crashOutcome(end: ProcessEnd, exit: ProcessExit | undefined): Outcome {
  if (end.brokenReason !== undefined) return failure('tool_crashed', 'The isolate process broke its protocol and was stopped.', { reason: end.brokenReason });
  // V8's fatal out-of-memory (an isolate's heap that isolated-vm could not contain) aborts the process.
  if (end.stderr !== undefined && OUT_OF_MEMORY.test(end.stderr))
    return failure('memory_limit', defaultMessage('memory_limit'), { memoryMb: end.memoryMb, reason: 'catastrophic_oom' });
  const signal = exitSignal(exit);
  return failure('tool_crashed', 'The tool crashed its isolate process.', {
    reason: 'isolate_process_exited',
    ...(signal !== undefined ? { signal } : exit?.exitCode !== null && exit?.exitCode !== undefined ? { exitCode: exit.exitCode } : {}),
  });
}

/** The signal that ended the process: its own, or the one bubblewrap reports as exit code 128 + the signal. */
export function exitSignal(exit: ProcessExit | undefined): NodeJS.Signals | undefined {
  if (exit?.signal !== undefined && exit.signal !== null) return exit.signal;
  const exitCode = exit?.exitCode ?? null;
  if (exitCode === null || exitCode <= 128 || exitCode > 128 + 64) return undefined;
  return (Object.entries(constants.signals) as Array<[NodeJS.Signals, number]>).find(([, number]) => number === exitCode - 128)?.[0];
}
