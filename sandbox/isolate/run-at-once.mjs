// A call's first step, run synchronously on the isolate process's main thread
// (runAtOnce), and the tool module's top level too (evaluateAtOnce): a tool that
// returns at once (most do) then costs no round trip to its isolate's thread,
// which under load is most of an echo call's time. Each step is bounded by a
// slice, and microtasks run inside it, so the slice bounds them too. Importing
// this module does nothing.

/**
 * Longest a synchronous step of tool code may hold this thread: every other call of the
 * process waits that long at most, once, since the process stops taking such steps after
 * one ran past it (StepsAtOnce).
 */
export const RUN_AT_ONCE_SLICE_MS = 50;
/** isolated-vm's message when a step ran past its `timeout`. */
export const TIMED_OUT = 'Script execution timed out.';

/**
 * Whether the process still runs tool code in synchronous steps: one per process, shared by
 * its slots, off for good once a step ran past its slice.
 * @typedef {{ on: boolean }} StepsAtOnce
 */
/** Event-loop turns a call's answer waits for its context's messages (allReceived); two suffice. */
const MAX_TURNS_FOR_MESSAGES = 16;

/**
 * Runs `run` of the prelude's runtime with `runArgs` synchronously for at most
 * RUN_AT_ONCE_SLICE_MS (or `deadlineMs`, what is left of the call's deadline, if shorter).
 * Returns its promise of the envelope (settled already when the tool returned at once; what it
 * awaits after the step, ctx calls, goes on as for any call), or undefined when the step ran
 * past the slice but not past the deadline: that context is then unusable for the call, since
 * the run was cut at an unknown point. A synchronous step takes the isolate's lock, so only an
 * idle slot's isolate may be given (IsolateSlot.mayStepAtOnce). What the tool asks of ctx during the
 * step waits in this thread's queue until the step is over (see allReceived).
 * @param {any} runtime  the prelude's runtime (a Reference) @param {unknown[]} runArgs
 * @param {number} deadlineMs @param {() => boolean} isUsable  whether the isolate survived the step
 * @returns {Promise<unknown> | undefined}
 */
export function runAtOnce(runtime, runArgs, deadlineMs, isUsable) {
  return withinSlice((timeout) => runtime.applySync(undefined, runArgs, { timeout, result: { copy: true, promise: true } }), deadlineMs, isUsable);
}

/**
 * Runs a tool module's top level synchronously, held to the slice as runAtOnce's step is.
 * Returns true once it ran (its throw is thrown, as module.evaluate's would be), or false
 * when it ran past the slice but not past `deadlineMs`: that context is then unusable (its
 * top level was cut at an unknown point).
 * @param {any} module  an instantiated isolated-vm Module @param {number} deadlineMs
 * @param {() => boolean} isUsable  whether the isolate survived the step
 */
export function evaluateAtOnce(module, deadlineMs, isUsable) {
  return withinSlice((timeout) => (module.evaluateSync({ timeout }), true), deadlineMs, isUsable) ?? false;
}

/**
 * `step(timeout)` with the slice (or what is left of the deadline, if shorter) as its timeout;
 * undefined when it ran past the slice but not past the deadline, in an isolate that lives on.
 * @template T @param {(timeoutMs: number) => T} step @param {number} deadlineMs @param {() => boolean} isUsable
 * @returns {T | undefined}
 */
function withinSlice(step, deadlineMs, isUsable) {
  const timeout = Math.min(deadlineMs, RUN_AT_ONCE_SLICE_MS);
  try {
    return step(timeout);
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
