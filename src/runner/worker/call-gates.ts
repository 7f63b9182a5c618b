// The start gates of the calls handed to a worker pool: one Int32 per task in a
// SharedArrayBuffer both sides change only with compare-and-swap. A thread is
// handed several calls at once (so it does not sleep and get woken again for
// every call, which cost the host's main thread a futex wake and a context
// switch per call), but runs them one at a time (sandbox/worker/worker-entry.mjs). A
// call that stops before its thread began it is withdrawn and never begins;
// one that is running is marked so its thread begins nothing more before it is
// ended: so ending a thread never ends a call other than the one that stopped,
// and a call the thread never began can be handed to the next thread safely.
//
// A gate holds, in turn: the task's ticket (handed over, not begun), then
// `startedBase - threadId` (begun, on that thread), then `done`; or `withdrawn`
// instead of beginning, or `killing` instead of `done`.
import type { WorkerGateMarks } from '../../../sandbox/shared/messages.mjs';

export const GATE_MARKS: WorkerGateMarks = { withdrawn: -1, done: -2, killing: -3, startedBase: -16 };

/** What stopping a handed-over call found. */
type GateStop =
  /** The thread had not begun it and now never will. */
  | { readonly kind: 'withdrawn' }
  /** Running on thread `threadId`, which begins nothing more: end that thread. */
  | { readonly kind: 'running'; readonly threadId: number }
  /** It already finished; its answer is on its way. */
  | { readonly kind: 'finished' };

const WITHDRAWN: GateStop = { kind: 'withdrawn' };
const FINISHED: GateStop = { kind: 'finished' };
/** Tickets stay positive int32s, so they never look like a mark. */
const MAX_TICKET = 2 ** 31 - 1;

export class CallGates {
  readonly buffer: SharedArrayBuffer;
  readonly #words: Int32Array;
  readonly #free: number[] = [];
  #ticket = 0;

  constructor(size: number) {
    this.buffer = new SharedArrayBuffer(size * Int32Array.BYTES_PER_ELEMENT);
    this.#words = new Int32Array(this.buffer);
    for (let slot = size - 1; slot >= 0; slot--) this.#free.push(slot);
  }

  /** Gates not in use. */
  get available(): number {
    return this.#free.length;
  }

  /** Arms a free gate with a fresh ticket for a task about to be handed over; the caller checked `available`. */
  open(): { readonly slot: number; readonly ticket: number } {
    const slot = this.#free.pop();
    if (slot === undefined) throw new Error('internal: no free worker call gate');
    this.#ticket = this.#ticket >= MAX_TICKET ? 1 : this.#ticket + 1;
    Atomics.store(this.#words, slot, this.#ticket);
    return { slot, ticket: this.#ticket };
  }

  /** Frees a gate once its task settled (answered, or its thread is gone): until then a thread may still read it. */
  release(slot: number): void {
    this.#free.push(slot);
  }

  /** Withdraws the call if its thread has not begun it, else marks a running one so its thread begins nothing more. */
  stop(slot: number, ticket: number): GateStop {
    const seen = Atomics.compareExchange(this.#words, slot, ticket, GATE_MARKS.withdrawn);
    if (seen === ticket || seen === GATE_MARKS.withdrawn) return WITHDRAWN;
    if (seen <= GATE_MARKS.startedBase && Atomics.compareExchange(this.#words, slot, seen, GATE_MARKS.killing) === seen) {
      return { kind: 'running', threadId: GATE_MARKS.startedBase - seen };
    }
    return FINISHED;
  }

  /** After the call's thread died: true when it never began the call (now withdrawn), so it may run elsewhere. */
  withdrawUnbegun(slot: number, ticket: number): boolean {
    const seen = Atomics.compareExchange(this.#words, slot, ticket, GATE_MARKS.withdrawn);
    return seen === ticket || seen === GATE_MARKS.withdrawn;
  }
}
