// Session limits (SPEC section 5 step 2): the call budget, the concurrency
// slots and an already-cancelled request. Slots are granted strictly in
// arrival order: a mutating call (or any call not both read-only and
// concurrency-safe) runs alone; read-only concurrency-safe calls run side by
// side up to maxConcurrency. Strict FIFO means a waiting mutating call is not
// starved by a stream of readers behind it.
import { hostError, type HostError } from '../../errors.js';
import type { ToolView } from '../../policy/types.js';
import type { CallControl } from '../call-control.js';
import { SessionCounters } from '../session-counters.js';

/** `exclusive`: runs alone. `shared`: beside other shared calls. */
type SlotKind = 'exclusive' | 'shared';

/** Gives the slot back; idempotent. */
export type ReleaseSlot = () => void;

/** The kind of slot a call to this tool needs; an unknown tool holds a shared slot until lookup refuses it. */
export function slotKindFor(view: ToolView | undefined): SlotKind {
  if (!view) return 'shared';
  const manifest = view.manifest;
  return manifest.sideEffect === 'read_only' && manifest.concurrencySafe ? 'shared' : 'exclusive';
}

/**
 * The budget and the concurrency slots of one supervisor. The slots belong to the
 * supervisor (its runners); the counts belong to the session (`counters`), which
 * outlives a reload and is shared by every supervisor that serves the session.
 */
export class SessionLimits {
  #running = 0;
  #runningExclusive = false;
  readonly #queue: Waiter[] = [];

  constructor(
    readonly maxCallsPerSession: number,
    readonly maxConcurrency: number,
    readonly maxConsecutiveFailures: number = Number.POSITIVE_INFINITY,
    /** The session counted when a call names none. */
    readonly counters: SessionCounters = new SessionCounters(),
  ) {}

  /** Calls admitted so far in the default session. */
  get callCount(): number {
    return this.counters.callCount;
  }

  /** Refuses a session whose run is over, then counts one call against its budget (`call_limit`). */
  admit(counters: SessionCounters = this.counters): void {
    counters.checkOpen(this);
    counters.admit(this);
  }

  /** A slot of `kind` now, when one is free and no call waits ahead (FIFO); undefined otherwise. */
  tryAcquire(kind: SlotKind): ReleaseSlot | undefined {
    if (this.#queue.length > 0 || !this.#fits(kind)) return undefined;
    this.#take(kind);
    return this.#releaseFor(kind);
  }

  /** Waits, in FIFO order, for a slot of `kind`; `cancelled` when the signal aborts first. */
  async acquire(kind: SlotKind, signal: AbortSignal): Promise<ReleaseSlot> {
    throwIfCancelled(signal);
    const now = this.tryAcquire(kind);
    if (now !== undefined) return now;
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const waiter: Waiter = {
        kind,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.#releaseFor(kind));
        },
      };
      const onAbort = (): void => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        reject(cancelledError());
        // A cancelled head may have been the one blocking shared calls behind it.
        this.#grant();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#grant();
    });
  }

  #grant(): void {
    for (;;) {
      const head = this.#queue[0];
      if (!head || !this.#fits(head.kind)) return;
      this.#queue.shift();
      this.#take(head.kind);
      head.grant();
    }
  }

  #take(kind: SlotKind): void {
    this.#running++;
    if (kind === 'exclusive') this.#runningExclusive = true;
  }

  #fits(kind: SlotKind): boolean {
    if (kind === 'exclusive') return this.#running === 0;
    return !this.#runningExclusive && this.#running < this.maxConcurrency;
  }

  #releaseFor(kind: SlotKind): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      if (kind === 'exclusive') this.#runningExclusive = false;
      this.#grant();
    };
  }
}

/** `cancelled` when the request was cancelled before or while it waited (a signal, or a call's control). */
export function throwIfCancelled(cancel: { readonly aborted: boolean }): void {
  if (cancel.aborted) throw cancelledError();
}

function cancelledError(): HostError {
  return hostError('cancelled');
}

interface Waiter {
  readonly kind: SlotKind;
  readonly grant: () => void;
}

/**
 * The session-limits stage: not cancelled, the run not over, within budget, then a
 * slot of the right kind in FIFO order. The run is checked again once the slot is
 * granted: a call queued behind a terminal tool's call must not run after it.
 */
export async function enterSession(
  limits: SessionLimits,
  kind: SlotKind,
  control: Pick<CallControl, 'aborted' | 'signal'>,
  counters: SessionCounters = limits.counters,
): Promise<ReleaseSlot> {
  throwIfCancelled(control);
  limits.admit(counters);
  // Granted now: the run was checked open by admit() just above, and nothing ran since.
  const now = limits.tryAcquire(kind);
  if (now !== undefined) return now;
  // Only a call that must wait makes the control's signal (to leave the queue on a cancel).
  const release = await limits.acquire(kind, control.signal);
  try {
    counters.checkOpen(limits);
  } catch (error) {
    release();
    throw error;
  }
  return release;
}
