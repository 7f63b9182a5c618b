// One lane of a worker pool: a Piscina task that holds one pool thread for as
// long as the lane is open (sandbox/worker/worker-entry.mjs's `serve`), and the
// MessagePort that thread's calls and answers travel on. A call handed to a
// lane is one postMessage each way, with no Piscina task, promise or thread
// wake-up of its own: those would be paid on the host's main thread, call
// after call (its CPU per call: `npm run bench -- --only latency`). Piscina
// still owns the thread: it starts it with the pool's resource limits and
// environment, replaces it when it dies, and ends it when the pool closes; then
// the lane's task fails, and the lane ends with it.
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { WorkerLaneAnswer, WorkerTask } from '../../../sandbox/shared/messages.mjs';
import { readLaneAnswer } from '../../../sandbox/shared/readers.mjs';
import type { WorkerCall } from './worker-call.js';

/** What a lane tells its dispatch. */
interface LaneEvents {
  /** The thread answered the call of this gate (or withdrew it, or failed it). */
  readonly answered: (lane: WorkerLane, call: WorkerCall, message: WorkerLaneAnswer) => void;
  /**
   * The lane's task settled: its thread died or was ended (`error`), or the lane was closed.
   * Answers that arrived before are handed on first; `held` are the calls it still held.
   */
  readonly ended: (lane: WorkerLane, held: WorkerCall[], error: unknown) => void;
}

export class WorkerLane {
  /** The calls handed to this lane's thread and not answered yet, by gate slot. */
  readonly #calls = new Map<number, WorkerCall>();
  readonly #port: MessagePort;
  /** Set when the lane's thread is being ended or the lane closed: nothing more is handed to it. */
  #ending = false;
  #idleTimer: NodeJS.Timeout | undefined;
  /** The calls handed this turn, posted together once it is over (one message, one wake-up of the thread). */
  #outbox: WorkerTask[] = [];

  constructor(
    pool: Piscina,
    private readonly events: LaneEvents,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    port1.on('message', (message: unknown) => this.#answer(message));
    // Piscina keeps the pool's thread referenced while its task runs; this port need not.
    port1.unref();
    pool.run({ port: port2 }, { transferList: [port2] as never }).then(
      () => this.#end(undefined),
      (error: unknown) => this.#end(error ?? new Error('worker lane failed')),
    );
  }

  /** Calls on this lane now. */
  get load(): number {
    return this.#calls.size;
  }

  get open(): boolean {
    return !this.#ending;
  }

  /**
   * Posts the call to the thread with the others handed meanwhile: with several calls in
   * flight they arrive together, and the thread is woken once for them, not once each.
   * An idle thread gets its call as soon as the callback that handed it is over (the
   * calls of one stdin read still go together); a busy one reads its calls only once
   * its current call ends, so they wait for the end of the turn and go in one message.
   * It begins a call only if it wins its gate (call-gates.ts), so one stopped meanwhile never begins.
   */
  hand(call: WorkerCall): void {
    this.#calls.set(call.slot, call);
    this.cancelIdle();
    if (this.#outbox.length === 0) {
      if (this.#calls.size === 1) process.nextTick(this.#post);
      else setImmediate(this.#post);
    }
    this.#outbox.push({ callId: call.job.callId, args: call.job.args, slot: call.slot, ticket: call.ticket });
  }

  readonly #post = (): void => {
    const tasks = this.#outbox;
    this.#outbox = [];
    // A lane that ended meanwhile has a closed port: posting to it does nothing, and its calls were handed back.
    if (tasks.length > 0) this.#port.postMessage(tasks);
  };

  /** Nothing more is handed to this lane: its thread is being ended (the pool then fails its task). */
  markEnding(): void {
    this.#ending = true;
  }

  /** Lets go of the thread: the task ends once the thread sees the port close. Only for an idle lane. */
  close(): void {
    this.#ending = true;
    this.cancelIdle();
    this.#port.close();
  }

  /** Calls `onIdle` after `ms` unless the lane gets a call first. */
  whenIdleFor(ms: number, onIdle: (lane: WorkerLane) => void): void {
    this.cancelIdle();
    this.#idleTimer = setTimeout(() => onIdle(this), ms);
    this.#idleTimer.unref();
  }

  cancelIdle(): void {
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  #answer(value: unknown): void {
    const message = readLaneAnswer(value);
    // Not an answer: its call is answered when its thread ends or its control stops it.
    if ('type' in message) return;
    const call = this.#calls.get(message.slot);
    // The ticket tells an answer from one to an earlier call of the same gate (never expected).
    if (call === undefined || call.ticket !== message.ticket) return;
    this.#calls.delete(message.slot);
    this.events.answered(this, call, message);
  }

  #end(error: unknown): void {
    this.#ending = true;
    this.cancelIdle();
    // Answers the thread posted before it died may still wait in the port: they count.
    for (let entry = receiveMessageOnPort(this.#port); entry !== undefined; entry = receiveMessageOnPort(this.#port)) {
      this.#answer(entry.message);
    }
    this.#port.close();
    this.#outbox = [];
    const held = [...this.#calls.values()];
    this.#calls.clear();
    this.events.ended(this, held, error);
  }
}
