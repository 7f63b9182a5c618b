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

describe('sha256Hex and isSha256Hex', () => {
  it('hashes bytes and strings alike', () => {
    expect(sha256Hex('abc')).toBe(sha256Hex(new TextEncoder().encode('abc')));
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
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
