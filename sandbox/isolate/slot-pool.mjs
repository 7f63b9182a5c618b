// The isolate process's slots (isolate-slot.mjs): one call at a time in each,
// at most maxIsolates of them, the rest of the calls queued in order. A call
// gets a slot whose refill is done (its next context prepared and evaluated
// ahead) when there is one; a slot a call may have spoiled (stopped, retired,
// crowded by garbage) is dropped and its place serves the next queued call with
// a new isolate. Importing this module does nothing.

/** @typedef {import('./isolate-slot.mjs').IsolateSlot} IsolateSlot */

/**
 * Isolates kept warm for calls one after another: each call goes to one whose
 * refill is done, so the fresh context the last call's isolate is making (about
 * half a millisecond of V8 work on that isolate's thread) is made beside the
 * next call instead of in front of it. Each still has the tool's heap limit.
 */
export const WARM_SLOTS = 2;

export class SlotPool {
  /**
   * @param {number} maxIsolates  most slots at once
   * @param {() => IsolateSlot} makeSlot  a new slot (a new isolate)
   */
  constructor(maxIsolates, makeSlot) {
    this.maxIsolates = Math.max(1, Number(maxIsolates) || 1);
    this.makeSlot = makeSlot;
    /** @type {IsolateSlot[]} Slots waiting for a call, warm. */
    this.idle = [];
    /** Slots alive, busy or idle. */
    this.count = 0;
    /** @type {((slot: IsolateSlot) => void)[]} Calls waiting for a slot (all isolates busy). */
    this.queue = [];
  }

  /** The process's first slot, idle; the caller prepares its first context. */
  first() {
    const slot = this.newSlot();
    this.idle.push(slot);
    return slot;
  }

  /** Adds refilling idle slots up to WARM_SLOTS (never past maxIsolates), used before the first. */
  warm() {
    while (this.count < Math.min(WARM_SLOTS, this.maxIsolates)) {
      const slot = this.newSlot();
      this.idle.unshift(slot);
      slot.refill();
    }
  }

  /**
   * A slot for one call, busy: an idle one whose refill is done, else the one
   * released last, else a new one while there is room, else the next to be freed.
   * @returns {Promise<IsolateSlot>}
   */
  acquire() {
    if (this.idle.length > 0) {
      let at = this.idle.length - 1;
      for (let index = at; index >= 0; index -= 1) {
        if (/** @type {IsolateSlot} */ (this.idle[index]).isReady) {
          at = index;
          break;
        }
      }
      return Promise.resolve(busy(/** @type {IsolateSlot} */ (this.idle.splice(at, 1)[0])));
    }
    if (this.count < this.maxIsolates) return Promise.resolve(busy(this.newSlot()));
    return new Promise((resolve) => this.queue.push(resolve));
  }

  /**
   * Takes a slot back after its call: a slot that may be spoiled (`spoiled`: the
   * call was stopped) or is crowded by garbage goes; a sound one serves the next
   * queued call or waits, refilling.
   * @param {IsolateSlot} slot @param {boolean} spoiled
   */
  async afterCall(slot, spoiled) {
    if (spoiled || !slot.isUsable || (await slot.isCrowdedByGarbage().catch(() => true))) {
      this.retire(slot);
      return;
    }
    this.release(slot);
  }

  /**
   * A slot whose call never started (stopped while it waited for one): back to
   * the pool as it is.
   * @param {IsolateSlot} slot
   */
  release(slot) {
    slot.busy = false;
    if (!slot.isUsable) {
      this.count -= 1;
      slot.dispose('retired');
    } else {
      const waiting = this.queue.shift();
      if (waiting !== undefined) {
        waiting(busy(slot));
        return;
      }
      this.idle.push(slot);
      slot.refill();
    }
    this.serveQueued();
  }

  /** @param {IsolateSlot} slot */
  retire(slot) {
    slot.dispose('retired');
    this.count -= 1;
    slot.busy = false;
    this.serveQueued();
    // Room for a warm slot: the next call should not build its isolate in front of itself.
    if (this.idle.length === 0 && this.count < this.maxIsolates) {
      const spare = this.newSlot();
      this.idle.push(spare);
      spare.refill();
    }
  }

  /** A freed place serves the next queued call with a new isolate. */
  serveQueued() {
    while (this.queue.length > 0 && this.count < this.maxIsolates) {
      /** @type {(slot: IsolateSlot) => void} */ (this.queue.shift())(busy(this.newSlot()));
    }
  }

  newSlot() {
    this.count += 1;
    return this.makeSlot();
  }
}

/** @param {IsolateSlot} slot */
function busy(slot) {
  slot.busy = true;
  return slot;
}
