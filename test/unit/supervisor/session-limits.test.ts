import { describe, expect, it } from 'vitest';
import { HostError } from '../../../src/errors.js';
import { SessionLimits } from '../../../src/supervisor/session-limits.js';

const never = new AbortController().signal;

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
});
