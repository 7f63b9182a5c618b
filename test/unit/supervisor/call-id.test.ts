// Call ids are RFC 9562 UUID version 7 (call-id.ts): the format, the version
// and variant bits, the timestamp, strictly increasing within the process
// whatever the clock does (still, stepping back, more ids in one ms than the
// counter holds), never repeated, and 62 random bits in each.
import { describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import type { CallRequest } from '../../../src/supervisor/types.js';
import { CallContext } from '../../../src/supervisor/call-context.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { createCallIdSource, newCallId } from '../../../src/supervisor/call-id.js';

/** Lowercase 8-4-4-4-12, version nibble 7, variant bits 10. */
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit timestamp of an id. */
const timeOf = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
/** The 12-bit counter (rand_a). */
const counterOf = (id: string): number => parseInt(id.slice(15, 18), 16);
/** The 62 random bits (rand_b) as a bit string. */
const randomBitsOf = (id: string): string => {
  const hex = id.slice(19, 23) + id.slice(24);
  return BigInt(`0x${hex}`).toString(2).padStart(64, '0').slice(2);
};

/** A clock the test moves by hand. */
function handClock(start: number): { now: number; read: () => number } {
  const clock = { now: start, read: () => clock.now };
  return clock;
}

function expectStrictlyIncreasing(ids: readonly string[]): void {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i - 1]! < ids[i]!)) throw new Error(`id ${i} (${ids[i]}) is not greater than id ${i - 1} (${ids[i - 1]})`);
  }
}

describe('call ids (UUIDv7)', () => {
  it('are lowercase 8-4-4-4-12 with version 7 and the RFC 9562 variant, and carry the clock in their first 48 bits', () => {
    const clock = handClock(Date.UTC(2026, 11, 2, 1, 30, 0, 123));
    const next = createCallIdSource(clock.read);
    const id = next();
    expect(id).toMatch(UUID_V7);
    expect(timeOf(id)).toBe(clock.now);
    for (let i = 0; i < 1000; i++) expect(newCallId()).toMatch(UUID_V7);
  });

  it('seed the counter at each new millisecond with its top bit clear (room for at least 2048 ids in that ms)', () => {
    const clock = handClock(1_000_000);
    const next = createCallIdSource(clock.read);
    const seeds = new Set<number>();
    for (let i = 0; i < 500; i++) {
      clock.now++;
      const id = next();
      expect(timeOf(id)).toBe(clock.now);
      expect(counterOf(id)).toBeLessThanOrEqual(0x7ff);
      seeds.add(counterOf(id));
    }
    // Random, not a constant: 500 draws of 11 bits take far more than a handful of values.
    expect(seeds.size).toBeGreaterThan(300);
  });

  it('strictly increase while the clock stands still, the counter counting up in that millisecond', () => {
    const clock = handClock(1_700_000_000_000);
    const next = createCallIdSource(clock.read);
    const ids = Array.from({ length: 1500 }, () => next());
    expectStrictlyIncreasing(ids);
    expect(ids.every((id) => timeOf(id) === clock.now)).toBe(true);
    for (let i = 1; i < ids.length; i++) expect(counterOf(ids[i]!)).toBe(counterOf(ids[i - 1]!) + 1);
  });

  it('strictly increase past the counter rolling over: the timestamp moves a millisecond ahead, and on when the clock catches up', () => {
    const clock = handClock(1_700_000_000_000);
    const next = createCallIdSource(clock.read);
    // More ids than 12 bits hold, all in one millisecond of the clock.
    const ids = Array.from({ length: 3 * 4096 }, () => next());
    expectStrictlyIncreasing(ids);
    const times = new Set(ids.map(timeOf));
    expect(Math.min(...times)).toBe(clock.now);
    expect(Math.max(...times)).toBeGreaterThan(clock.now);
    expect(Math.max(...times)).toBeLessThanOrEqual(clock.now + 6);
    // The clock reaches the borrowed millisecond: still after every id made.
    clock.now = Math.max(...times);
    const later = [next(), next()];
    expectStrictlyIncreasing([...ids, ...later]);
    clock.now += 10;
    const after = next();
    expectStrictlyIncreasing([...later, after]);
    expect(timeOf(after)).toBe(clock.now);
  });

  it('strictly increase across a clock step back: the last timestamp is kept until the clock passes it again', () => {
    const clock = handClock(1_700_000_000_500);
    const next = createCallIdSource(clock.read);
    const before = [next(), next()];
    clock.now -= 60_000; // NTP steps the clock a minute back
    const during = Array.from({ length: 100 }, () => next());
    expect(during.every((id) => timeOf(id) === 1_700_000_000_500)).toBe(true);
    clock.now = 1_700_000_000_501;
    const after = next();
    expectStrictlyIncreasing([...before, ...during, after]);
    expect(timeOf(after)).toBe(1_700_000_000_501);
  });

  it('never repeat and stay unguessable: 62 random bits per id, each bit taking both values, no two alike', () => {
    const clock = handClock(1_700_000_000_000);
    const next = createCallIdSource(clock.read);
    const ids = Array.from({ length: 2000 }, () => next());
    const randomParts = ids.map(randomBitsOf);
    expect(new Set(randomParts).size).toBe(ids.length);
    for (let bit = 0; bit < 62; bit++) {
      const ones = randomParts.filter((bits) => bits[bit] === '1').length;
      // Binomial(2000, 0.5): 1000 ± 22 (1 sigma); 800..1200 fails only for a biased or constant bit.
      expect(ones).toBeGreaterThan(800);
      expect(ones).toBeLessThan(1200);
    }
    const many = Array.from({ length: 100_000 }, () => newCallId());
    expect(new Set(many).size).toBe(many.length);
    expectStrictlyIncreasing(many);
  });

  it('refuse a timestamp that does not fit 48 bits instead of writing a wrong one', () => {
    expect(() => createCallIdSource(() => 2 ** 48)()).toThrow(RangeError);
    expect(() => createCallIdSource(() => -1)()).toThrow(RangeError);
  });

  it("are what a call's context takes as its id, in the order the calls were made", () => {
    const contextOf = () => new CallContext({ name: 'echo', args: {}, meta: {} } as unknown as CallRequest, new CallControl([]), 'session-1', createSilentLogger());
    const ids = Array.from({ length: 50 }, () => contextOf().callId);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expectStrictlyIncreasing(ids);
  });
});
