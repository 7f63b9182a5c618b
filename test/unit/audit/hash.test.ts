import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, hashArgs, isSha256Hex, sha256Hex } from '../../../src/audit/hash.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth so key order does not change the hash', () => {
    const a = { b: 1, a: { y: [1, { d: 2, c: 3 }], x: null } };
    const b = { a: { x: null, y: [1, { c: 3, d: 2 }] }, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}');
    expect(hashArgs(a)).toBe(hashArgs(b));
  });

  it('keeps a "__proto__" key as data', () => {
    const parsed: unknown = JSON.parse('{"__proto__":{"x":1},"a":2}');
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"x":1},"a":2}');
    expect(hashArgs(parsed)).not.toBe(hashArgs({ a: 2 }));
  });

  it('treats absent arguments as {}', () => {
    expect(hashArgs(undefined)).toBe(hashArgs({}));
    expect(hashArgs({})).toBe(createHash('sha256').update('{}').digest('hex'));
  });
});

// The sorted copy canonicalJson always made before its fast path: every hash in existing
// journals was computed this way, so the fast path must give byte-identical JSON.
function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedCopy);
  if (value === null || typeof value !== 'object') return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  const sorted = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value).sort()) sorted[key] = sortedCopy((value as Record<string, unknown>)[key]);
  return sorted;
}
const reference = (value: unknown): string => JSON.stringify(sortedCopy(value)) ?? 'null';

describe("canonicalJson is the sorted copy's JSON, whatever the input", () => {
  class Point {
    constructor(
      readonly y: number,
      readonly x: number,
    ) {}
  }
  const nullPrototype = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 2 });
  const withHole: unknown[] = [1, 2];
  withHole[3] = 4;
  const deep = (levels: number): unknown => (levels === 0 ? { z: 1, a: 2 } : { k: deep(levels - 1) });
  it.each<[string, unknown]>([
    ['sorted keys', { a: 1, b: { c: [1, 'x', true, null] } }],
    ['unsorted keys', { b: 1, a: 2 }],
    ['unsorted deep inside an array', { a: [{ d: 1, c: 2 }] }],
    ['integer-like keys (enumerated first, numerically)', { '10': 1, '9': 2, a: 3, '1a': 4 }],
    ['only integer-like keys', JSON.parse('{"2":1,"10":2}')],
    ['a key that starts with a digit but is no index', { '1a': 1, b: 2 }],
    ['"__proto__" as data', JSON.parse('{"__proto__":{"y":1,"x":2},"a":2}')],
    ['non-finite numbers and -0', { a: Number.NaN, b: Number.POSITIVE_INFINITY, c: -0, d: 1e21, e: 5e-7 }],
    ['undefined members and array items', { a: undefined, b: [undefined, 1], c: () => 1 }],
    ['an array with a hole', { a: withHole }],
    ['a Date (toJSON)', { when: new Date(0), a: 1 }],
    ['an object with its own toJSON', { v: { toJSON: () => ({ z: 1, a: 2 }) } }],
    ['a class instance', { p: new Point(1, 2) }],
    ['a null-prototype object', { o: nullPrototype }],
    ['boxed primitives', { n: new Number(3), s: new String('x') }],
    ['unicode keys (UTF-16 order)', { '\u{1F600}': 1, '\uFFFF': 2, é: 3, e: 4 }],
    ['escapes in strings and keys', { 'q"k': 'line\nbreak \u2028 "quoted" \\', a: '\u0000' }],
    ['very deep nesting', deep(100)],
    ['a top-level string', 'text'],
    ['a top-level undefined', undefined],
    ['an empty object and array', { a: {}, b: [] }],
  ])('%s', (_name, value) => {
    expect(canonicalJson(value)).toBe(reference(value));
  });

  it('random JSON documents (seeded)', () => {
    let seed = 0x2545f491;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const keys = ['a', 'b', 'B', '0', '7', '12', '_', 'zz', 'é', '__proto__', 'toJSON', ''];
    const build = (depth: number): unknown => {
      const pick = next();
      if (depth > 4 || pick < 0.3) return [null, true, false, 0, -1.5, 'x', '', '\u00e9'][Math.floor(next() * 8)];
      if (pick < 0.55) return Array.from({ length: Math.floor(next() * 4) }, () => build(depth + 1));
      const text = `{${Array.from({ length: Math.floor(next() * 5) }, () => `${JSON.stringify(keys[Math.floor(next() * keys.length)])}:${JSON.stringify(build(depth + 1))}`).join(',')}}`;
      return JSON.parse(text) as unknown;
    };
    for (let index = 0; index < 2_000; index++) {
      const value = build(0);
      expect(canonicalJson(value)).toBe(reference(value));
    }
  });
});

describe('sha256Hex and isSha256Hex', () => {
  it('hashes bytes and strings alike', () => {
    expect(sha256Hex('abc')).toBe(sha256Hex(new TextEncoder().encode('abc')));
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes non-ASCII strings as UTF-8, like a Hash object does', () => {
    for (const text of ['é', '\u{1F600}', 'a\u0000b', '\uD800']) {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      expect(sha256Hex(Buffer.from(text, 'utf8'))).toBe(sha256Hex(text));
    }
  });

  it.each([
    ['a'.repeat(64), true],
    ['A'.repeat(64), false],
    ['a'.repeat(63), false],
    [`../${'a'.repeat(61)}`, false],
    [42, false],
  ])('isSha256Hex(%j) is %s', (value, expected) => {
    expect(isSha256Hex(value)).toBe(expected);
  });
});
