// The one termination control of a call (STYLE section 7). It links the
// request's signal and the host's shutdown by hand (Node 20's AbortSignal.any
// keeps a composite with listeners alive until it aborts, and a call's signal
// normally never does: one per call grew the host forever), arms the deadline
// with a delay setTimeout can hold, keeps the first reason when several race
// (a deadline and a cancel), carries the one-sentence message of each, and
// runs what runners registered to stop. dispose() lets go of everything.
// Its AbortSignal is made only when something asks for `signal` (an API that
// takes one, an elicitation): most calls never stop and no runner reads it,
// and an AbortSignal with its listeners would be paid on the host's main thread
// by every call (its CPU per call: `npm run bench -- --only latency`). A signal
// asked for after the stop is made already aborted.
import { defaultMessage, type ErrorCode, type ErrorDetails, type RunCode } from '../errors.js';
import type { RunControl } from '../runner/run-types.js';

/** The largest delay setTimeout can hold; larger values (or Infinity) would fire at once. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** A delay setTimeout can hold: negative becomes 0, non-finite or huge becomes the maximum. */
export function clampDelayMs(delayMs: number): number {
  return Number.isFinite(delayMs) ? Math.min(Math.max(0, delayMs), MAX_TIMER_DELAY_MS) : MAX_TIMER_DELAY_MS;
}

/** The listener options of every link (one object, not one per call). */
const ONCE: AddEventListenerOptions = Object.freeze({ once: true });

interface CallControlOptions {
  /** Arms the deadline now (a runner test, an approval wait); the supervisor arms it when the run begins. */
  readonly timeoutMs?: number;
  /** The reason a source signal's abort stops the call with; default `cancelled`. */
  readonly abortReason?: ErrorCode;
}

export class CallControl implements RunControl {
  /** Made by the first read of `signal`, aborted by the stop (at once when made after it). */
  #controller: AbortController | undefined;
  /** The reason the signal aborts with: the stop's own, or the aborted source's. */
  #signalReason: unknown;
  /** True once the call was stopped (what `signal.aborted` says, without making the signal). */
  #aborted = false;
  readonly #abortReason: ErrorCode;
  // The three lists are made by their first entry, as a one-entry array: a call has one
  // deadline and one backstop, and an empty array's first push reserved 17 slots.
  #links: Array<readonly [AbortSignal, () => void]> | undefined;
  #onStop: Array<(reason: ErrorCode) => void> | undefined;
  #timers: NodeJS.Timeout[] | undefined;
  #reason: ErrorCode | undefined;
  #timeoutMs = Infinity;
  /** The armed deadline: when it fires, how to disarm it, and how many sandbox starts hold it. */
  #deadline: { atMs: number; disarm: () => void; pauses: number; remainingMs: number; isOver: boolean } | undefined;
  #stopped: Promise<ErrorCode> | undefined;
  #resolveStopped: ((reason: ErrorCode) => void) | undefined;
  #disposed = false;

  /** Follows `sources` (the request's signal, the host's shutdown): any abort stops the call. */
  constructor(sources: readonly AbortSignal[] = [], options: CallControlOptions = {}) {
    this.#abortReason = options.abortReason ?? 'cancelled';
    for (const source of sources) this.follow(source);
    if (options.timeoutMs !== undefined) this.startDeadline(options.timeoutMs);
  }

  /**
   * Follows one more source (the supervisor adds the host's shutdown to the control
   * the protocol layer built): its abort stops the call. Let go of by dispose().
   */
  follow(source: AbortSignal): void {
    if (this.#aborted || this.#disposed) return;
    if (source.aborted) {
      this.#stop(this.#abortReason, source.reason);
      return;
    }
    const onAbort = (): void => void this.#stop(this.#abortReason, source.reason);
    source.addEventListener('abort', onAbort, ONCE);
    const link = [source, onAbort] as const;
    if (this.#links === undefined) this.#links = [link];
    else this.#links.push(link);
  }

  /** Stops the call as a source's abort would (reason `abortReason`), the signal aborting with `signalReason`. */
  abort(signalReason: unknown): ErrorCode {
    return this.#stop(this.#abortReason, signalReason);
  }

  /** The call's AbortSignal, made now if nobody asked before (already aborted when the call stopped). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#signalReason);
    }
    return this.#controller.signal;
  }

  /** Whether the call was stopped: what `signal.aborted` would say, without making the signal. */
  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): ErrorCode | undefined {
    return this.#reason;
  }

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  get stopped(): Promise<ErrorCode> {
    this.#stopped ??= this.#aborted && this.#reason !== undefined ? Promise.resolve(this.#reason) : new Promise((resolve) => (this.#resolveStopped = resolve));
    return this.#stopped;
  }

  /** Arms the deadline: `timeout` after `timeoutMs`. Returns the function that disarms it (the run is over). */
  startDeadline(timeoutMs: number): () => void {
    this.#timeoutMs = timeoutMs;
    const deadline = { atMs: performance.now() + timeoutMs, disarm: this.#after(timeoutMs, () => this.stop('timeout')), pauses: 0, remainingMs: timeoutMs, isOver: false };
    this.#deadline = deadline;
    return () => {
      deadline.isOver = true;
      deadline.disarm();
    };
  }

  /**
   * Holds the deadline while a sandbox starts for this call (SPEC section 3: a start never
   * counts against `timeoutMs`); the returned function resumes it with the time that was
   * left. Pauses nest; resuming twice is harmless.
   */
  pauseDeadline(): () => void {
    const deadline = this.#deadline;
    if (deadline === undefined || deadline.isOver || this.#aborted) return () => {};
    if (deadline.pauses++ === 0) {
      deadline.remainingMs = Math.max(0, deadline.atMs - performance.now());
      deadline.disarm();
    }
    let isResumed = false;
    return () => {
      if (isResumed) return;
      isResumed = true;
      if (--deadline.pauses !== 0 || deadline.isOver || this.#aborted) return;
      deadline.atMs = performance.now() + deadline.remainingMs;
      deadline.disarm = this.#after(deadline.remainingMs, () => this.stop('timeout'));
    };
  }

  /** Resolves `graceMs` after the call stopped: a backstop for work that does not report its stop. */
  afterStop(graceMs: number): Promise<void> {
    return new Promise<void>((resolve) => this.onStopAfter(graceMs, resolve));
  }

  /**
   * Runs `then` `graceMs` after the call stopped (afterStop without a promise, for the
   * supervisor's backstop on every call). Returns the function that cancels it.
   */
  onStopAfter(graceMs: number, then: () => void): () => void {
    let disarm: (() => void) | undefined;
    const unregister = this.onStop(() => (disarm = this.#after(graceMs, then)));
    return () => {
      unregister();
      disarm?.();
    };
  }

  stop(reason: ErrorCode): ErrorCode {
    return this.#stop(reason, reason);
  }

  // The signal aborts with the source's own reason when a source aborted (as a linked signal would).
  #stop(reason: ErrorCode, signalReason: unknown): ErrorCode {
    this.#reason ??= reason;
    if (this.#aborted) return this.#reason;
    this.#aborted = true;
    this.#signalReason = signalReason;
    this.#unlink();
    this.#controller?.abort(signalReason);
    this.#resolveStopped?.(this.#reason);
    const onStop = this.#onStop;
    this.#onStop = undefined;
    if (onStop !== undefined) for (const stopIt of onStop) stopIt(this.#reason);
    return this.#reason;
  }

  /**
   * Records why the call ends without stopping anything (a refusal, a tool's
   * own failure): the first reason still wins, and a later cancel still aborts
   * the signal, so nothing more is sent for that request. Returns the reason that won.
   */
  settle(reason: ErrorCode): ErrorCode {
    this.#reason ??= reason;
    return this.#reason;
  }

  onStop(onStop: (reason: ErrorCode) => void): () => void {
    if (this.#aborted && this.#reason !== undefined) {
      onStop(this.#reason);
      return () => {};
    }
    if (this.#onStop === undefined) this.#onStop = [onStop];
    else this.#onStop.push(onStop);
    return () => removeFrom(this.#onStop, onStop);
  }

  failure(): { readonly code: RunCode; readonly message: string; readonly details: ErrorDetails } {
    const reason = this.#reason ?? 'internal';
    const code: RunCode = reason === 'timeout' || reason === 'cancelled' || reason === 'output_limit' ? reason : 'cancelled';
    return { code, message: defaultMessage(code), details: code === 'timeout' ? { timeoutMs: this.#timeoutMs } : {} };
  }

  /** Lets go of the sources, the timers and what runners registered; the call is over. */
  dispose(): void {
    this.#disposed = true;
    this.#unlink();
    if (this.#timers !== undefined) for (const timer of this.#timers) clearTimeout(timer);
    this.#timers = undefined;
    this.#onStop = undefined;
  }

  #after(delayMs: number, then: () => void): () => void {
    if (this.#disposed) return () => {};
    const timer = setTimeout(then, clampDelayMs(delayMs));
    // A pending deadline must not keep a finished process alive.
    timer.unref();
    if (this.#timers === undefined) this.#timers = [timer];
    else this.#timers.push(timer);
    return () => {
      clearTimeout(timer);
      removeFrom(this.#timers, timer);
    };
  }

  #unlink(): void {
    const links = this.#links;
    if (links === undefined) return;
    this.#links = undefined;
    for (const [source, onAbort] of links) source.removeEventListener('abort', onAbort);
  }
}

/** A failure as a call reports it: its code, one sentence for the model, its facts. */
interface CallFailure {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: ErrorDetails;
}

/**
 * How a call that failed with `failure` (a runner's outcome, a stage's HostError) ends:
 * the one place "first reason wins" is decided. The failure stands (the same object)
 * unless the control recorded another reason first (a cancel that arrived before the
 * runner reported stays a cancel): then the control's own failure. A timeout is the
 * call's deadline whichever timer saw it first (the control's, or a runner's own such
 * as isolated-vm's): it ends with the control's sentence and `timeoutMs`, the runner's
 * other facts kept.
 */
export function concludeCall<F extends CallFailure>(control: CallControl, failure: F): F | CallFailure {
  const code = control.settle(failure.code);
  if (code !== failure.code) return control.failure();
  if (code !== 'timeout') return failure;
  const { message, details } = control.failure();
  if (failure.message === message && failure.details['timeoutMs'] === details['timeoutMs']) return failure;
  return { code, message, details: { ...failure.details, ...details } };
}

/** Removes `item` from `list` in place (lists of a few entries: no copy per call). */
function removeFrom<T>(list: T[] | undefined, item: T): void {
  if (list === undefined) return;
  const index = list.indexOf(item);
  if (index >= 0) list.splice(index, 1);
}
