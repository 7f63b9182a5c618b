// Hands a worker tool's calls to its Piscina pool: at most `perThread` calls
// per thread at a time (the thread runs them one after another, see
// call-gates.ts), the rest wait here in a bounded FIFO. A call stopped while it
// waits here, or before its thread began it, just leaves; one stopped while
// running ends its thread (Piscina starts a fresh one). Calls that thread held
// but never began go back to the head of the line and run on the next thread.
import type { Piscina } from 'piscina';
import type { WorkerTask } from '../wire.js';
import { failure, type Outcome } from '../tool-envelope.js';
import type { CallGates } from './call-gates.js';
import type { WorkerCall } from './worker-call.js';

export interface DispatchRules {
  /** Calls handed to all threads at once: threads × calls per thread. */
  readonly capacity: number;
  /** Calls that may wait here for room; more are refused. */
  readonly maxQueue: number;
  readonly isClosed: () => boolean;
  /** Maps a rejection from `pool.run` (a thread that died, the pool closing) to the call's failure. */
  readonly classify: (error: unknown, call: WorkerCall) => Outcome;
  /** Tells the thread running a call to abort it (ctx.signal) just before that thread is ended. */
  readonly postAbort: (callId: string) => void;
}

export class CallDispatch {
  readonly #waiting: WorkerCall[] = [];
  /** Tasks handed to the pool and not settled yet, stopped ones included (their gates are still in use). */
  #handed = 0;
  /** Threads being ended: nothing is handed over until they are gone, or it would go to them. */
  #ending = 0;

  constructor(
    private readonly pool: Piscina,
    private readonly gates: CallGates,
    private readonly rules: DispatchRules,
  ) {}

  submit(call: WorkerCall): void {
    if (this.#waiting.length === 0 && this.#hasRoom()) {
      this.#hand(call);
    } else if (this.#waiting.length >= this.rules.maxQueue) {
      call.finish(failure('internal', 'The worker pool is overloaded.', { reason: 'queue_full', maxQueue: this.rules.maxQueue }));
    } else {
      this.#waiting.push(call);
    }
  }

  /** The call's control stopped: take it off the line, withdraw it from its thread, or end the thread running it. */
  stop(call: WorkerCall): void {
    const at = this.#waiting.indexOf(call);
    if (at >= 0) {
      this.#waiting.splice(at, 1);
    } else if (call.slot >= 0) {
      const found = this.gates.stop(call.slot, call.ticket);
      if (found.kind === 'running') {
        this.rules.postAbort(call.job.callId);
        this.#endThread(found.threadId);
      }
    }
    call.stopped();
  }

  /** The runner closed: calls still waiting here are answered by `answer` (the pool answers the rest). */
  drop(answer: Outcome): void {
    for (const call of this.#waiting.splice(0)) call.finish(answer);
  }

  #hasRoom(): boolean {
    return this.#ending === 0 && this.#handed < this.rules.capacity;
  }

  #hand(call: WorkerCall): void {
    const { slot, ticket } = this.gates.open();
    call.slot = slot;
    call.ticket = ticket;
    this.#handed++;
    this.pool.run({ callId: call.job.callId, args: call.job.args, slot, ticket } satisfies WorkerTask).then(
      (answer: unknown) => this.#settled(call, slot, ticket, answer, undefined),
      (error: unknown) => this.#settled(call, slot, ticket, undefined, error ?? new Error('worker task failed')),
    );
  }

  #settled(call: WorkerCall, slot: number, ticket: number, answer: unknown, error: unknown): void {
    // Read the gate before it is freed: a call its dead thread never began may run on the next one.
    const unbegun = error !== undefined && !call.done && !this.rules.isClosed() && this.gates.withdrawUnbegun(slot, ticket);
    this.gates.release(slot);
    this.#handed--;
    if (call.slot === slot) call.slot = -1;
    if (!call.done) {
      if (error === undefined) call.answered(answer);
      else if (unbegun) this.#waiting.unshift(call);
      else call.finish(this.rules.classify(error, call));
    }
    this.#pump();
  }

  #pump(): void {
    while (this.#waiting.length > 0 && this.#hasRoom() && !this.rules.isClosed()) {
      this.#hand(this.#waiting.shift() as WorkerCall);
    }
  }

  #endThread(threadId: number): void {
    const thread = this.pool.threads.find((worker) => worker.threadId === threadId);
    if (thread === undefined) return; // already gone (it crashed); Piscina replaces it
    this.#ending++;
    // Piscina's own exit listener (added first) replaces the thread and fails its tasks; then hand over again.
    thread.once('exit', () => {
      this.#ending--;
      this.#pump();
    });
    void thread.terminate();
  }
}
