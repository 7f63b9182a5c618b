import { describe, expect, it } from 'vitest';
import { parseStrictJson, scanJson } from '../../../../src/supervisor/result/strict-json.js';

describe('parseStrictJson', () => {
  it.each([
    ['{}', {}],
    ['[]', []],
    ['  {"a": [1, 2.5, -3e2, true, false, null, "x"]}  ', { a: [1, 2.5, -300, true, false, null, 'x'] }],
    ['"caf\\u00e9 \\n\\"q\\""', 'café \n"q"'],
    ['0', 0],
    ['{"a":{"a":{"a":1}}}', { a: { a: { a: 1 } } }],
    ['{"a":1,"b":{"a":2}}', { a: 1, b: { a: 2 } }],
    ['"😀"', '😀'],
    ['"\\ud83d\\ude00"', '😀'],
  ])('accepts %s', (text, value) => {
    const result = parseStrictJson(text);
    expect(result).toEqual({ ok: true, value });
  });

  it.each([
    ['', 'not_json'],
    ['{', 'not_json'],
    ['{"a":1,}', 'not_json'],
    ['[1,]', 'not_json'],
    ['[1 2]', 'not_json'],
    ['01', 'not_json'],
    ['1.', 'not_json'],
    ['-', 'not_json'],
    ['"\\x"', 'not_json'],
    ['"a\nb"', 'not_json'],
    ["{'a':1}", 'not_json'],
    ['{"a" 1}', 'not_json'],
    ['tru', 'not_json'],
    ['NaN', 'not_json'],
    ['{} {}', 'not_json'],
    ['"\\u12"', 'not_json'],
    ['{"a":1}]', 'not_json'],
    ['[}', 'not_json'],
  ])('refuses %j as %s', (text, reason) => {
    const result = parseStrictJson(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBe(reason);
  });

  it('refuses duplicate keys, compared after decoding escapes', () => {
    expect(parseStrictJson('{"a":1,"a":2}')).toMatchObject({ ok: false, reason: 'duplicate_key', key: 'a' });
    expect(parseStrictJson('{"a":1,"\\u0061":2}')).toMatchObject({ ok: false, reason: 'duplicate_key', key: 'a' });
    expect(parseStrictJson('[{"x":{"k":1,"k":1}}]')).toMatchObject({ ok: false, reason: 'duplicate_key', key: 'k' });
  });

  it('refuses lone surrogates written raw, accepts them escaped', () => {
    expect(parseStrictJson('"\ud800"')).toMatchObject({ ok: false, reason: 'invalid_unicode' });
    expect(parseStrictJson('"\udc00x"')).toMatchObject({ ok: false, reason: 'invalid_unicode' });
    expect(parseStrictJson('{"\ud800":1}')).toMatchObject({ ok: false, reason: 'invalid_unicode' });
    expect(parseStrictJson('"\\ud800"')).toEqual({ ok: true, value: '\ud800' });
  });

  it('allows exactly 256 levels and refuses 257', () => {
    const nest = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    expect(parseStrictJson(nest(256)).ok).toBe(true);
    expect(parseStrictJson(nest(257))).toMatchObject({ ok: false, reason: 'too_deep', offset: 256 });
    expect(parseStrictJson('{"a":'.repeat(300) + '1' + '}'.repeat(300))).toMatchObject({ ok: false, reason: 'too_deep' });
  });

  it('refuses a 100,000-deep document without overflowing the stack', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(scanJson(deep)).toMatchObject({ reason: 'too_deep', offset: 256 });
    // Even with no depth limit at all, the scan is iterative.
    expect(scanJson(deep, Infinity)).toBeUndefined();
  });

  it('keeps a __proto__ key as data', () => {
    const result = parseStrictJson('{"__proto__":{"polluted":true}}');
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype);
      expect(Object.keys(result.value as object)).toEqual(['__proto__']);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    }
  });
});

describe('parseStrictJson with the value already parsed', () => {
  it('checks the text exactly as without it, then uses the given value instead of parsing again', () => {
    const value = { a: [1] };
    const result = parseStrictJson('{"a":[1]}', 256, value);
    expect(result.ok && result.value).toBe(value);
  });

  it.each([
    ['{"k":1,"k":2}', { k: 2 }],
    ['{"a":1,"\\u0061":2}', { a: 2 }],
    ['['.repeat(257) + ']'.repeat(257), JSON.parse('['.repeat(257) + ']'.repeat(257)) as unknown],
    ['"\ud800"', '\ud800'],
  ])('refuses %j with the same problem, whatever value it is handed', (text, value) => {
    expect(parseStrictJson(text, 256, value)).toEqual(parseStrictJson(text, 256));
    expect(parseStrictJson(text, 256, value).ok).toBe(false);
  });
});
