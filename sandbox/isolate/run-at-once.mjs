// A call's first step, run synchronously on the isolate process's main thread
// (runAtOnce): a tool that returns at once (most do) then costs no round trip to
// its isolate's thread, which under load is most of an echo call's time. The
// step is bounded by a slice, and microtasks run inside it, so the slice bounds
// them too. Importing this module does nothing.
import { TIMED_OUT } from './isolate-slot.mjs';

/**
 * Longest a call's first synchronous step may hold this thread: every other call of the
 * process waits that long at most, once, since the main loop stops taking such steps after
 * one ran past it.
 */
export const RUN_AT_ONCE_SLICE_MS = 50;
/** Event-loop turns a call's answer waits for its context's messages (allReceived); two suffice. */
const MAX_TURNS_FOR_MESSAGES = 16;

/**
 * Runs `run` of the prelude's runtime with `runArgs` synchronously for at most
 * RUN_AT_ONCE_SLICE_MS (or `deadlineMs`, what is left of the call's deadline, if shorter).
 * Returns its promise of the envelope (settled already when the tool returned at once; what it
 * awaits after the step, ctx calls, goes on as for any call), or undefined when the step ran
 * past the slice but not past the deadline: that context is then unusable for the call, since
 * the run was cut at an unknown point. A synchronous step takes the isolate's lock, so only a
 * quiet slot's isolate may be given (IsolateSlot.isQuiet). What the tool asks of ctx during the
 * step waits in this thread's queue until the step is over (see allReceived).
 * @param {any} runtime  the prelude's runtime (a Reference) @param {unknown[]} runArgs
 * @param {number} deadlineMs @param {() => boolean} isUsable  whether the isolate survived the step
 * @returns {Promise<unknown> | undefined}
 */
export function runAtOnce(runtime, runArgs, deadlineMs, isUsable) {
  const timeout = Math.min(deadlineMs, RUN_AT_ONCE_SLICE_MS);
  try {
    return runtime.applySync(undefined, runArgs, { timeout, result: { copy: true, promise: true } });
  } catch (error) {
    if (timeout < deadlineMs && error instanceof Error && error.message === TIMED_OUT && isUsable()) return undefined;
    throw error;
  }
}

/**
 * Waits until every message the context sent during the run (the envelope's `hostCalls`) has
 * reached dispatch (`call.received`), as it has before the answer of a run on the isolate's
 * thread: a run that ended within runAtOnce's step answers before isolated-vm hands this thread
 * those messages, one turn of the event loop later. Bounded: a count that never arrives does
 * not hold the call.
 * @param {{ received: number }} call @param {unknown} envelope
 */
export async function allReceived(call, envelope) {
  const sent = typeof envelope === 'object' && envelope !== null ? /** @type {{ hostCalls?: unknown }} */ (envelope).hostCalls : undefined;
  const expected = typeof sent === 'number' ? sent : 0;
  for (let turns = 0; call.received < expected && turns < MAX_TURNS_FOR_MESSAGES; turns += 1) await new Promise(setImmediate);
}
