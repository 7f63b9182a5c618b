// The thread's side of the start gates of src/runner/worker/call-gates.ts: a
// call begins here only if this thread swaps its gate from the call's ticket to
// "begun on this thread"; when it ends, the gate goes to `done`, unless the
// host marked it `killing` (it is ending this thread): then nothing more begins.
/** @typedef {import('../shared/messages.mjs').WorkerGateMarks} WorkerGateMarks */

/**
 * @param {SharedArrayBuffer} buffer
 * @param {WorkerGateMarks} marks
 * @param {number} threadId
 */
export function threadGate(buffer, marks, threadId) {
  const gates = new Int32Array(buffer);
  const begunHere = marks.startedBase - threadId;
  return {
    /** True when the call may begin; false when the host withdrew it. @param {{ slot: number, ticket: number }} task */
    begin: (task) => Atomics.compareExchange(gates, task.slot, task.ticket, begunHere) === task.ticket,
    /** True when this thread may go on; false when the host is ending it. @param {{ slot: number }} task */
    end: (task) => Atomics.compareExchange(gates, task.slot, begunHere, marks.done) === begunHere,
  };
}
