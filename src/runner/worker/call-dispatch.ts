// Hands a worker tool's calls to its pool's threads, each through its lane
// (worker-lane.ts): at most `perThread` calls per thread at a time (the thread
// runs them one after another, see call-gates.ts), the rest wait here in a
// bounded FIFO. A call stopped while it waits here, or before its thread began
// it, just leaves; one stopped while running ends its thread (Piscina starts a
// fresh one). Calls that thread held but never began go back to the head of
// the line and run on the next thread.
import type { Piscina } from 'piscina';
import type { WorkerLaneAnswer } from '../../../sandbox/shared/messages.mjs';
import { failure, type Outcome } from '../tool-envelope.js';
import type { CallGates } from './call-gates.js';
import type { WorkerCall } from './worker-call.js';
import { WorkerLane } from './worker-lane.js';

interface DispatchRules {
  /** Threads (lanes) at most. */
  readonly maxThreads: number;
  /** Calls handed to one thread at once. */
  readonly perThread: number;
  /** Calls that may wait here for room; more are refused. */
  readonly maxQueue: number;
  /** How long a lane beyond the first may stay idle before it lets its thread go. */
  readonly idleMs: number;
  readonly isClosed: () => boolean;
  /** Maps a failed lane (its thread died, the pool closing) or a failed call to the call's failure. */
  readonly classify: (error: unknown, call: WorkerCall) => Outcome;
  /** Tells the thread running a call to abort it (ctx.signal) just before that thread is ended. */
  readonly postAbort: (callId: string) => void;
}

/**
 * How many dead threads a call may be handed back from, unbegun, before it fails with
 * their error: a thread that dies before it begins anything (it cannot start) would
 * otherwise have its calls handed from thread to thread for ever.
 */
const MAX_HANDED_BACK = 3;

/** Stands for a call the thread could not run (its run threw): classified as a crash of the thread. */
function callFailed(): Error {
  return new Error('the worker thread failed the call');
}

export class CallDispatch {
  readonly #waiting: WorkerCall[] = [];
  readonly #lanes: WorkerLane[] = [];
  /** The lane each handed call is on. */
  readonly #laneOf = new Map<WorkerCall, WorkerLane>();

  constructor(
    private readonly pool: Piscina,
    private readonly gates: CallGates,
    private readonly rules: DispatchRules,
  ) {}

  submit(call: WorkerCall): void {
    const lane = this.#waiting.length === 0 ? this.#laneWithRoom() : undefined;
    if (lane !== undefined) {
      this.#hand(call, lane);
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
        this.#endThread(this.#laneOf.get(call), found.threadId);
      }
    }
    call.stopped();
  }

  /** The runner closed: calls still waiting here are answered by `answer` (the lanes end with the pool). */
  drop(answer: Outcome): void {
    for (const call of this.#waiting.splice(0)) call.finish(answer);
  }

  /**
   * The open lane with the fewest calls, if it has room; a new lane when there is none
   * (and threads to spare). Like Piscina's own balancer, a busy pick also opens a lane
   * beside it for the calls after, so a second thread starts before it is needed.
   */
  #laneWithRoom(): WorkerLane | undefined {
    if (this.rules.isClosed()) return undefined;
    let best: WorkerLane | undefined;
    let open = 0;
    for (const lane of this.#lanes) {
      if (!lane.open) continue;
      open++;
      if (best === undefined || lane.load < best.load) best = lane;
    }
    const spare = this.#lanes.length < this.rules.maxThreads;
    if (best === undefined || best.load >= this.rules.perThread) return spare ? this.#openLane() : undefined;
    if (best.load > 0 && spare && open === this.#lanes.length) this.#openLane();
    return best;
  }

  #openLane(): WorkerLane {
    const lane = new WorkerLane(this.pool, {
      answered: (from, call, message) => this.#answered(from, call, message),
      ended: (from, held, error) => this.#laneEnded(from, held, error),
    });
    this.#lanes.push(lane);
    return lane;
  }

  #hand(call: WorkerCall, lane: WorkerLane): void {
    const { slot, ticket } = this.gates.open();
    call.slot = slot;
    call.ticket = ticket;
    this.#laneOf.set(call, lane);
    lane.hand(call);
  }

  #answered(lane: WorkerLane, call: WorkerCall, message: WorkerLaneAnswer): void {
    this.#letGo(call);
    if (!call.done) {
      if (message.failed === true) call.finish(this.rules.classify(callFailed(), call));
      else call.answered(message.answer);
    }
    if (lane.load === 0 && lane.open && this.#lanes[0] !== lane) lane.whenIdleFor(this.rules.idleMs, (idle) => this.#retire(idle));
    this.#pump();
  }

  /** The lane's thread is gone (or the lane closed): calls it never began run elsewhere, the one it ran fails. */
  #laneEnded(lane: WorkerLane, held: WorkerCall[], error: unknown): void {
    const at = this.#lanes.indexOf(lane);
    if (at >= 0) this.#lanes.splice(at, 1);
    const requeue: WorkerCall[] = [];
    for (const call of held) {
      // Read the gate before it is freed: a call its dead thread never began may run on the next one.
      const unbegun = !call.done && !this.rules.isClosed() && this.gates.withdrawUnbegun(call.slot, call.ticket);
      this.#letGo(call);
      if (call.done) continue;
      if (unbegun && call.handedBack < MAX_HANDED_BACK) {
        call.handedBack++;
        requeue.push(call);
      } else {
        call.finish(this.rules.classify(error ?? callFailed(), call));
      }
    }
    this.#waiting.unshift(...requeue);
    this.#pump();
  }

  /** Frees the call's gate once its thread can no longer read it (answered, or the thread is gone). */
  #letGo(call: WorkerCall): void {
    this.gates.release(call.slot);
    call.slot = -1;
    this.#laneOf.delete(call);
  }

  #retire(lane: WorkerLane): void {
    if (lane.load === 0 && lane.open && this.#lanes.length > 1) lane.close();
  }

  #pump(): void {
    while (this.#waiting.length > 0) {
      const lane = this.#laneWithRoom();
      if (lane === undefined) return;
      this.#hand(this.#waiting.shift() as WorkerCall, lane);
    }
  }

  #endThread(lane: WorkerLane | undefined, threadId: number): void {
    lane?.markEnding();
    const thread = this.pool.threads.find((worker) => worker.threadId === threadId);
    // Already gone (it crashed): its lane's task fails and the lane ends by itself.
    if (thread !== undefined) void thread.terminate();
  }
}
