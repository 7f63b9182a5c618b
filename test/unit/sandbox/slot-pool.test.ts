// The isolate process's slot pool, in this process with real isolates: one call
// per slot, at most maxIsolates slots, the rest queued in order; a spoiled slot
// is dropped and its place serves the next call with a new isolate; a call is
// given a slot whose refill is done when there is one.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { IsolateSlot, toPreludeClosure } from '../../../sandbox/isolate/isolate-slot.mjs';
import { SlotPool, WARM_SLOTS } from '../../../sandbox/isolate/slot-pool.mjs';

const ivm = createRequire(import.meta.url)('isolated-vm');
const PRELUDE = readFileSync(new URL('../../../sandbox/isolate/isolate-prelude.mjs', import.meta.url), 'utf8');
const SOURCES = {
  toolName: 'pool_probe',
  preludeClosure: toPreludeClosure(PRELUDE),
  toolSource: 'export default async function tool() { return 1; }',
  memoryMb: 32,
  runtimeOptions: { maxPendingHostCalls: 4, maxOutputChars: 10_000, maxMessageChars: 1000, maxEvents: 10, maxEventChars: 100, maxPathChars: 4096 },
};

const made: IsolateSlot[] = [];
afterEach(() => {
  for (const slot of made.splice(0)) slot.dispose('closed');
});

function newPool(maxIsolates: number): SlotPool {
  return new SlotPool(maxIsolates, () => {
    const slot = new IsolateSlot(ivm, SOURCES);
    made.push(slot);
    return slot;
  });
}

describe('SlotPool', () => {
  it('gives each call a busy slot of its own up to maxIsolates, then queues; a released slot serves the next in line', async () => {
    const pool = newPool(2);
    const first = await pool.acquire();
    const second = await pool.acquire();
    expect(first).not.toBe(second);
    expect([first.busy, second.busy, pool.count]).toEqual([true, true, 2]);
    const order: string[] = [];
    const third = pool.acquire().then((slot) => (order.push('third'), slot));
    const fourth = pool.acquire().then((slot) => (order.push('fourth'), slot));
    expect(pool.queue).toHaveLength(2);
    pool.release(second);
    expect(await third).toBe(second);
    expect(second.busy).toBe(true);
    pool.release(first);
    expect(await fourth).toBe(first);
    expect(order).toEqual(['third', 'fourth']);
    expect(pool.count).toBe(2);
  });

  it('drops a spoiled slot after its call, and its place serves a queued call with a new isolate', async () => {
    const pool = newPool(1);
    const slot = await pool.acquire();
    const queued = pool.acquire();
    await pool.afterCall(slot, true);
    expect(slot.isolate.isDisposed).toBe(true);
    const fresh = await queued;
    expect(fresh).not.toBe(slot);
    expect([fresh.busy, fresh.isUsable, pool.count]).toEqual([true, true, 1]);
  });

  it('keeps a warm slot after dropping one when no call waits', async () => {
    const pool = newPool(2);
    const slot = await pool.acquire();
    await pool.afterCall(slot, true);
    expect(pool.count).toBe(1);
    expect(pool.idle).toHaveLength(1);
    expect(pool.idle[0]).not.toBe(slot);
    await pool.idle[0]!.whenRefilled();
    expect(pool.idle[0]!.isReady).toBe(true);
  });

  it('takes a sound slot back idle, refilling, and gives a disposed one up', async () => {
    const pool = newPool(2);
    const slot = await pool.acquire();
    await pool.afterCall(slot, false);
    expect([slot.busy, pool.idle, pool.count]).toEqual([false, [slot], 1]);
    expect(slot.refilling).not.toBeUndefined();
    await slot.whenRefilled();
    const again = await pool.acquire();
    expect(again).toBe(slot);
    again.dispose('wedged');
    pool.release(again);
    expect([pool.count, pool.idle]).toEqual([0, []]);
  });

  it('starts warm slots beside the first, and hands a call one whose refill is done', async () => {
    const pool = newPool(4);
    const first = pool.first();
    first.spares.push(first.prepareNow());
    first.refill();
    await first.whenRefilled();
    pool.warm();
    expect(pool.count).toBe(WARM_SLOTS);
    expect(pool.idle).toHaveLength(WARM_SLOTS);
    // The warm slot is still refilling and sits first: the call goes to the ready one at the end.
    expect(pool.idle[0]!.isReady).toBe(false);
    expect(await pool.acquire()).toBe(first);
  });
});
