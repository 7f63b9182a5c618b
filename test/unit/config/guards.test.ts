// The one object check of the host (config/guards.ts, the far side's own from
// sandbox/shared/readers.mjs), and a scan that no file of src/ writes its own.
import { describe, expect, it } from 'vitest';
import { asRecord, isRecord } from '../../../src/config/guards.js';
import { sourceFiles } from '../../helpers/source-imports.js';

describe('isRecord', () => {
  it.each([
    [{}, true],
    [{ a: 1 }, true],
    [Object.create(null) as object, true],
    [[], false],
    [null, false],
    [undefined, false],
    ['{}', false],
    [1, false],
  ])('%j is a record: %s', (value, expected) => {
    expect(isRecord(value)).toBe(expected);
  });
});

describe('asRecord', () => {
  it('returns the object itself, and an empty one for anything else', () => {
    const value = { type: 'string' };
    expect(asRecord(value)).toBe(value);
    expect(asRecord(['x'])).toEqual({});
    expect(asRecord(null)).toEqual({});
  });
});

describe('one home for the object check', () => {
  it('no file of src/ spells out `typeof x === "object" && x !== null && !Array.isArray(x)` or defines its own isRecord', () => {
    const spelled = /typeof (\w+) === 'object' && \1 !== null && !Array\.isArray\(\1\)|function isRecord\(|const isRecord =/;
    const owners = sourceFiles('src', ['.ts', '.mjs'])
      .filter((source) => spelled.test(source.text))
      .map((source) => source.file);
    expect(owners).toEqual([]);
  });
});
