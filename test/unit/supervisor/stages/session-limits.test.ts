import { describe, expect, it } from 'vitest';
import { HostError } from '../../../../src/errors.js';
import { CallControl } from '../../../../src/supervisor/call-control.js';
import { SessionLimits, enterSession } from '../../../../src/supervisor/stages/session-limits.js';

const never = new AbortController().signal;
/** The control of a call nobody stops (enterSession reads a call's control). */
const idle = (): CallControl => new CallControl();

describe('SessionLimits', () => {
  it('refuses calls past the budget with call_limit', () => {
    const limits = new SessionLimits(2, 4);
    limits.admit();
    limits.admit();
    try {
      limits.admit();
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(HostError);
      expect((error as HostError).code).toBe('call_limit');
      expect((error as HostError).details).toEqual({ limit: 2 });
    }
  });

  it('grants in FIFO order: an exclusive waiter blocks shared calls queued behind it', async () => {
    const limits = new SessionLimits(100, 4);
    const order: string[] = [];
    const first = await limits.acquire('shared', never);
    const exclusive = limits.acquire('exclusive', never).then((release) => (order.push('exclusive'), release));
    const shared = limits.acquire('shared', never).then((release) => (order.push('shared'), release));
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    const releaseExclusive = await exclusive;
    expect(order).toEqual(['exclusive']);
    releaseExclusive();
    (await shared)();
    expect(order).toEqual(['exclusive', 'shared']);
  });

  it('runs shared calls side by side up to maxConcurrency', async () => {
    const limits = new SessionLimits(100, 2);
    const a = await limits.acquire('shared', never);
    await limits.acquire('shared', never);
    let third = false;
    const pending = limits.acquire('shared', never).then(() => (third = true));
    await Promise.resolve();
    expect(third).toBe(false);
    a();
    await pending;
    expect(third).toBe(true);
  });

  it('a cancelled waiter leaves the queue with cancelled, and unblocks those behind it', async () => {
    const limits = new SessionLimits(100, 4);
    const held = await limits.acquire('shared', never);
    const controller = new AbortController();
    const exclusive = limits.acquire('exclusive', controller.signal);
    const shared = limits.acquire('shared', never);
    controller.abort();
    await expect(exclusive).rejects.toMatchObject({ code: 'cancelled' });
    (await shared)();
    held();
  });

  it('refuses an already-cancelled request', async () => {
    const limits = new SessionLimits(100, 4);
    await expect(limits.acquire('shared', AbortSignal.abort())).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('enterSession takes a free slot at once, and queues behind a waiter in FIFO order', async () => {
    const limits = new SessionLimits(100, 4);
    const granted: string[] = [];
    const first = enterSession(limits, 'shared', idle());
    // The shared slot was taken when enterSession was called, not when its promise settles: this one queues.
    const exclusive = enterSession(limits, 'exclusive', idle()).then((release) => (granted.push('exclusive'), release));
    // A shared slot is free, but the exclusive call arrived first: this one waits behind it.
    const shared = enterSession(limits, 'shared', idle()).then((release) => (granted.push('shared'), release));
    await new Promise(setImmediate);
    expect(granted).toEqual([]);
    (await first)();
    const releaseExclusive = await exclusive;
    await new Promise(setImmediate);
    expect(granted).toEqual(['exclusive']);
    releaseExclusive();
    (await shared)();
    expect(granted).toEqual(['exclusive', 'shared']);
    expect(typeof (await enterSession(limits, 'exclusive', idle()))).toBe('function');
  });

  it('enterSession refuses with a rejected promise, never a throw: cancelled, then the budget', async () => {
    const limits = new SessionLimits(1, 4);
    const cancelled = enterSession(limits, 'shared', new CallControl([AbortSignal.abort()]));
    await expect(cancelled).rejects.toMatchObject({ code: 'cancelled' });
    expect(limits.callCount).toBe(0);
    expect(typeof (await enterSession(limits, 'shared', idle()))).toBe('function');
    await expect(enterSession(limits, 'shared', idle())).rejects.toMatchObject({ code: 'call_limit', details: { limit: 1 } });
  });
});
