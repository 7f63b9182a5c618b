// One call of a worker tool on the host: what it was given, the one answer it
// gives (finish() settles it once, whoever comes first: the thread's answer,
// its stop, the pool's failure), and the events it waits for before answering.
// One object per call instead of an abort, a drain, a listener closure and a
// promise wrapper each.
import type { Logger } from '../../log.js';
import type { WorkerEventMessage } from '../../../sandbox/shared/messages.mjs';
import { CallEvents } from '../events.js';
import type { Job, RunOptions, RunOutcome } from '../run-types.js';
import { parseToolEnvelope, toRunOutcome, type Outcome } from '../tool-envelope.js';

/** How long a finished call waits for its last progress/log events to drain. */
const EVENT_DRAIN_MS = 1000;

/** What every call of one pool reads its answer with. */
export interface CallRules {
  readonly logger: Logger;
  readonly floodCapBytes: number;
  /** Called once the call is settled (lets go of its event routing). */
  readonly onSettled: (call: WorkerCall) => void;
}

export class WorkerCall {
  /** The gate of the task now handed to the pool for this call, or -1 (call-gates.ts). */
  slot = -1;
  ticket = 0;
  /** Threads that died holding this call before they began it (call-dispatch.ts hands it on, a few times at most). */
  handedBack = 0;
  #done = false;
  #events = 0;
  #wanted = 0;
  #envelope: unknown = undefined;
  #drainTimer: NodeJS.Timeout | undefined;
  #unregister: (() => void) | undefined;
  readonly #forward: CallEvents;

  constructor(
    readonly job: Job,
    readonly options: RunOptions,
    private readonly rules: CallRules,
    private readonly startedMs: number,
    private readonly resolve: (outcome: RunOutcome) => void,
  ) {
    this.#forward = new CallEvents({ options, logger: rules.logger, facts: { callId: job.callId } });
  }

  get done(): boolean {
    return this.#done;
  }

  /** Registers what stops the call (the control's one onStop); let go of when the call settles. */
  stopsWith(onStop: (call: WorkerCall) => void): void {
    this.#unregister = this.options.control.onStop(() => onStop(this));
  }

  /** The thread's answer: it counts the events posted for the call, so wait for the rest (bounded) before answering. */
  answered(envelope: unknown): void {
    if (this.#done) return;
    const wanted = postedEventsOf(envelope);
    if (this.#events >= wanted) {
      this.#finishWith(envelope);
      return;
    }
    this.#wanted = wanted;
    this.#envelope = envelope;
    this.#drainTimer = setTimeout(() => this.#finishWith(envelope), EVENT_DRAIN_MS);
    this.#drainTimer.unref();
  }

  /** A progress, log or denial event of this call from the pool's channel. */
  event(message: WorkerEventMessage): void {
    if (this.#done) return;
    if (message.type === 'progress') this.#forward.progress(message);
    else if (message.type === 'log') this.#forward.log(message.level, message.message);
    else this.#forward.denied(message.denial);
    this.#events++;
    if (this.#envelope !== undefined && this.#events >= this.#wanted) this.#finishWith(this.#envelope);
  }

  /** The stopped control's failure (deadline, cancel, shutdown). */
  stopped(): void {
    this.finish({ ok: false as const, ...this.options.control.failure() });
  }

  finish(outcome: Outcome): void {
    if (this.#done) return;
    this.#done = true;
    if (this.#drainTimer !== undefined) clearTimeout(this.#drainTimer);
    this.#unregister?.();
    this.rules.onSettled(this);
    this.resolve(toRunOutcome(outcome, performance.now() - this.startedMs));
  }

  #finishWith(envelope: unknown): void {
    this.finish(parseToolEnvelope(envelope, { source: 'worker', floodCapBytes: this.rules.floodCapBytes }));
  }
}

/** How many events the worker says it posted for the call (its answer's `events`); 0 when absent or not a count. */
function postedEventsOf(envelope: unknown): number {
  const events = typeof envelope === 'object' && envelope !== null ? (envelope as Record<string, unknown>)['events'] : undefined;
  return typeof events === 'number' && Number.isSafeInteger(events) && events > 0 ? events : 0;
}
