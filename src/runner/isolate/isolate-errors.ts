// The one place that turns isolated-vm's failures into run codes. isolated-vm
// reports everything as a plain Error whose message is the only signal, so the
// messages are pinned here (and in test/unit/runner/isolate-errors.test.ts).
import { defaultMessage, type ErrorDetails, type RunCode } from '../../errors.js';

/** Messages isolated-vm 5.0.x throws on the host side, verbatim. */
export const IVM_MESSAGES = {
  timedOut: 'Script execution timed out.',
  disposedMemory: 'Isolate was disposed during execution due to memory limit',
  disposed: 'Isolate was disposed during execution',
  promiseAbandoned: 'Promise was abandoned',
  isolateDisposed: 'Isolate is disposed',
  arrayBufferFailed: 'Array buffer allocation failed',
} as const;

/** Why the host itself disposed an isolate, if it did. */
type HostDisposeReason = 'retired' | 'wedged' | 'closed';

export interface IsolateFacts {
  /** `isolate.isDisposed` when the error was seen. */
  readonly isolateDisposed: boolean;
  /** Set when the host disposed the isolate on purpose; otherwise only the memory limit disposes one. */
  readonly hostDisposeReason?: HostDisposeReason;
  readonly memoryMb: number;
  /** The call's time limit (its control's `timeoutMs`), which a timeout reports. */
  readonly timeoutMs: number;
}

interface ClassifiedFailure {
  readonly code: RunCode;
  readonly message: string;
  readonly details: ErrorDetails;
}

/** Maps an error thrown by an isolated-vm call (module evaluate, apply, copy) to a run code. */
export function classifyIsolateError(error: unknown, facts: IsolateFacts): ClassifiedFailure {
  const message = messageOf(error);
  if (message === IVM_MESSAGES.timedOut) {
    // isolated-vm's own timer (armed with the time left of the call's) can see the deadline first: the same facts as the call's.
    return { code: 'timeout', message: defaultMessage('timeout'), details: { timeoutMs: facts.timeoutMs } };
  }
  if (message === IVM_MESSAGES.disposedMemory || message === IVM_MESSAGES.arrayBufferFailed) {
    return memoryLimit(facts.memoryMb);
  }
  const isDisposalMessage = message === IVM_MESSAGES.disposed || message === IVM_MESSAGES.promiseAbandoned || message === IVM_MESSAGES.isolateDisposed;
  if (isDisposalMessage || facts.isolateDisposed) {
    if (facts.hostDisposeReason === 'closed') {
      return { code: 'cancelled', message: defaultMessage('cancelled', 'runner_closed'), details: { reason: 'runner_closed' } };
    }
    if (facts.hostDisposeReason !== undefined) {
      return {
        code: 'tool_crashed',
        message: 'The tool was stopped because its isolate had to be reset.',
        details: { reason: 'isolate_reset' },
      };
    }
    // isolated-vm disposes an isolate on its own only when the heap limit is hit;
    // a continuation that hits it after an await surfaces as "Promise was abandoned".
    if (facts.isolateDisposed) return memoryLimit(facts.memoryMb);
  }
  return { code: 'internal', message: 'The isolate runner failed.', details: { reason: 'isolate_error' } };
}

/** Whether an error is one of isolated-vm's own failures rather than something the tool threw. */
export function isIvmFailure(error: unknown): boolean {
  const message = messageOf(error);
  return (Object.values(IVM_MESSAGES) as string[]).includes(message);
}

/** Whether an error the tool threw itself (and did not catch) means its heap ran out. */
export function isToolMemoryError(name: string | undefined, message: string): boolean {
  return name === 'RangeError' && message === IVM_MESSAGES.arrayBufferFailed;
}

function memoryLimit(memoryMb: number): ClassifiedFailure {
  return {
    code: 'memory_limit',
    message: defaultMessage('memory_limit'),
    details: { memoryMb },
  };
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : '';
}
