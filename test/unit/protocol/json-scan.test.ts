// The scanner reads numbers by hand (a sticky regex allocated a match per number):
// it must accept exactly JSON's number grammar, and fail at the same offset as before.
import { describe, expect, it } from 'vitest';
import { scanJson } from '../../../src/protocol/json-scan.js';

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('scanJson: numbers', () => {
  it.each([
    ['[0]', 'ok'],
    ['[-0]', 'ok'],
    ['[1.5]', 'ok'],
    ['[1E-2]', 'ok'],
    ['[1.5e3]', 'ok'],
    ['[9.99E+99]', 'ok'],
    ['[12345678901234567890]', 'ok'],
    ['[01]', 2],
    ['[00]', 2],
    ['[-01]', 3],
    ['[1.]', 2],
    ['[2.]', 2],
    ['[1.e3]', 2],
    ['[1e]', 2],
    ['[1e+]', 2],
    ['[1ee]', 2],
    ['[1e5x]', 4],
    ['[1.0.0]', 4],
    ['[0x1]', 2],
    ['[-]', 1],
    ['[--1]', 1],
    ['[-a]', 1],
    ['[+1]', 1],
    ['[.5]', 1],
    ['[NaN]', 1],
    ['[-Infinity]', 1],
  ])('%s → %s', (text, expected) => {
    const scan = scanJson(text, 64);
    expect(scan.ok ? 'ok' : scan.offset).toBe(expected);
    expect(scan.ok).toBe(parses(text));
    // The same number as an object value and as the whole document.
    const inner = text.slice(1, -1);
    expect(scanJson(`{"a":${inner}}`, 64).ok).toBe(parses(`{"a":${inner}}`));
    expect(scanJson(inner, 64).ok).toBe(parses(inner));
  });
});

describe('scanJson: key lists reused across objects', () => {
  it('an object at a level does not see the keys of the one before it at that level', () => {
    expect(scanJson('[{"a":1,"b":2},{"b":1,"a":2}]', 64)).toEqual({ ok: true, maxDepth: 2, topLevel: 'array' });
    expect(scanJson('[{"a":1,"b":2,"c":3},{"c":1,"c":2}]', 64)).toMatchObject({ ok: true, duplicateKey: '/-/c' });
  });

  it('past the short list, a set still finds a duplicate, and the next object starts empty', () => {
    const keys = Array.from({ length: 20 }, (_, i) => `"k${i}":${i}`).join(',');
    expect(scanJson(`[{${keys},"k19":0}]`, 64)).toMatchObject({ ok: true, duplicateKey: '/-/k19' });
    expect(scanJson(`[{${keys}},{${keys}}]`, 64)).toEqual({ ok: true, maxDepth: 2, topLevel: 'array' });
  });
});
