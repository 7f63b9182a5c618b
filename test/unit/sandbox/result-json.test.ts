// A worker tool's result as JSON (sandbox/worker/result-json.mjs): plain data takes
// JSON.stringify alone, anything else the checked pass; both must answer as the checked
// pass alone would, and a tool's getter that throws is a refusal, never an exception
// out of the call (the thread would then fail the call instead of answering it).
import { describe, expect, it } from 'vitest';
import { serializeResult } from '../../../sandbox/worker/result-json.mjs';

describe('a worker result as JSON', () => {
  it.each([
    ['a string', 'hi', '"hi"'],
    ['null', null, 'null'],
    ['nested plain data', { a: [1, 'x', true, null, { b: [] }] }, '{"a":[1,"x",true,null,{"b":[]}]}'],
    ['an undefined property, left out', { a: undefined, b: 1 }, '{"b":1}'],
    ['a null-prototype object', Object.assign(Object.create(null), { a: 1 }), '{"a":1}'],
    ['a value with toJSON', { when: new Date(0) }, '{"when":"1970-01-01T00:00:00.000Z"}'],
  ])('writes %s', (_name, value, json) => {
    expect(serializeResult(value)).toEqual({ json });
  });

  it.each([
    ['a BigInt', { n: 1n }, { reason: 'bigint', path: '/n' }],
    ['a function', { f: () => 1 }, { reason: 'function', path: '/f' }],
    ['a non-finite number', { list: [1, Number.NaN] }, { reason: 'non_finite_number', path: '/list/1' }],
    ['undefined in an array', { list: [1, undefined] }, { reason: 'undefined', path: '/list/1' }],
    ['undefined itself', undefined, { reason: 'undefined', path: '/' }],
  ])('refuses %s, naming where', (_name, value, refusal) => {
    expect(serializeResult(value)).toEqual(refusal);
  });

  it('refuses a cycle', () => {
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(serializeResult(cycle)).toEqual({ reason: 'not_serializable' });
  });

  it('refuses a result whose getter throws, instead of throwing', () => {
    const value = {
      get boom(): never {
        throw new Error('boom');
      },
    };
    expect(() => serializeResult(value)).not.toThrow();
    expect(serializeResult(value)).toEqual({ reason: 'not_serializable' });
  });

  it('refuses a result whose getter answers a BigInt only when JSON.stringify reads it', () => {
    let reads = 0;
    const value = {
      get n(): number | bigint {
        return reads++ === 0 ? 1 : 1n;
      },
    };
    expect(() => serializeResult(value)).not.toThrow();
    expect(serializeResult(value)).toMatchObject({ reason: 'bigint' });
  });
});
