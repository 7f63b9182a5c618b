import { describe, expect, it } from 'vitest';
import { ByteBudget, TailBuffer, decodeUtf8Strict } from '../../../../src/runner/process/output-cap.js';

describe('ByteBudget', () => {
  it('allows up to the cap and refuses past it', () => {
    const budget = new ByteBudget(10);
    expect(budget.spend(6)).toBe(true);
    expect(budget.spend(4)).toBe(true);
    expect(budget.isExceeded).toBe(false);
    expect(budget.spend(1)).toBe(false);
    expect(budget.isExceeded).toBe(true);
    expect(budget.totalBytes).toBe(11);
  });

  it('starts again from zero after reset, with the same cap', () => {
    const budget = new ByteBudget(10);
    budget.spend(11);
    expect(budget.reset()).toBe(budget);
    expect(budget.isExceeded).toBe(false);
    expect(budget.spend(10)).toBe(true);
    expect(budget.spend(1)).toBe(false);
  });
});

describe('TailBuffer', () => {
  it('keeps only the last bytes', () => {
    const tail = new TailBuffer(8);
    for (const piece of ['hello ', 'there ', 'world']) tail.push(Buffer.from(piece));
    expect(tail.toText()).toBe('re world');
  });

  it('keeps the end of one oversized chunk', () => {
    const tail = new TailBuffer(4);
    tail.push(Buffer.from('abcdefgh'));
    expect(tail.toText()).toBe('efgh');
  });

  it('does not start in the middle of a character', () => {
    const tail = new TailBuffer(3);
    tail.push(Buffer.from('éé')); // 4 bytes: the last 3 start inside the first é
    expect(tail.toText()).toBe('é');
  });

  it('clears', () => {
    const tail = new TailBuffer(4);
    tail.push(Buffer.from('abc'));
    tail.clear();
    expect(tail.toText()).toBe('');
  });
});

describe('decodeUtf8Strict', () => {
  it.each([
    [[0x61, 0xc3, 0xa9], 'aé'],
    [[0xef, 0xbb, 0xbf, 0x31], '\ufeff1'],
    [[0xff], undefined],
    [[0xc3], undefined],
    [[0xed, 0xa0, 0x80], undefined],
  ])('%j', (bytes, expected) => {
    expect(decodeUtf8Strict(Uint8Array.from(bytes))).toBe(expected);
  });
});
