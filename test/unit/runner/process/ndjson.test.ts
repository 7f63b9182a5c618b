import { describe, expect, it } from 'vitest';
import { LineSplitter, MAX_ERROR_MESSAGE_CHARS, encodeRequest, parseEnvelope, splitTopLevelMembers } from '../../../../src/runner/process/ndjson.js';

const line = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('parseEnvelope', () => {
  it.each([
    ['{"id":"a","result":{"x":[1,2]}}', { kind: 'result', id: 'a', resultJson: '{"x":[1,2]}' }],
    ['{"id":7,"result":"s,}]"}', { kind: 'result', id: '7', resultJson: '"s,}]"' }],
    ['{ "result" : [ 1 , {"y":"\\"}"} ] , "id":"b" }', { kind: 'result', id: 'b', resultJson: '[ 1 , {"y":"\\"}"} ]' }],
    ['{"id":"a","result":null}', { kind: 'result', id: 'a', resultJson: 'null' }],
    // A string ending in an escaped backslash ends at its quote; an escaped quote does not end it.
    ['{"id":"a\\\\","result":["x\\\\",  "y\\\"}" ]\t}', { kind: 'result', id: 'a\\', resultJson: '["x\\\\",  "y\\\"}" ]' }],
    ['{"id":"a","\\u0072esult":{"k":1}}', { kind: 'result', id: 'a', resultJson: '{"k":1}' }],
    ['{"id":"a","error":{"message":"nope"}}', { kind: 'error', id: 'a', message: 'nope' }],
    ['{"id":"a","error":"nope"}', { kind: 'error', id: 'a', message: 'The tool reported an error.' }],
    ['{"id":"a","progress":{"progress":1,"total":4,"message":"m"}}', { kind: 'progress', id: 'a', progress: { progress: 1, total: 4, message: 'm' } }],
    ['{"id":"a","progress":{"progress":1}}', { kind: 'progress', id: 'a', progress: { progress: 1 } }],
    ['   ', { kind: 'blank' }],
    ['not json', { kind: 'invalid', reason: 'not_json' }],
    ['[1,2]', { kind: 'invalid', reason: 'not_an_envelope' }],
    ['{"result":1}', { kind: 'invalid', reason: 'not_an_envelope' }],
    ['{"id":"a"}', { kind: 'invalid', reason: 'not_an_envelope' }],
    ['{"id":"a","progress":{"progress":"x"}}', { kind: 'invalid', reason: 'not_an_envelope' }],
    ['{"id":"a","id":"b","result":1}', { kind: 'invalid', reason: 'duplicate_envelope_key' }],
  ])('%s', (text, expected) => {
    // A result's value comes from the one parse of its line: it is the value of its text.
    const withValue = 'resultJson' in expected ? { ...expected, result: JSON.parse(expected.resultJson) as unknown } : expected;
    expect(parseEnvelope(line(text))).toEqual(withValue);
  });

  it('refuses a line that is not UTF-8', () => {
    expect(parseEnvelope(Buffer.from([0x7b, 0xff, 0x7d]))).toEqual({ kind: 'invalid', reason: 'invalid_utf8' });
  });

  it('keeps a duplicate-key result as its exact text', () => {
    // The supervisor refuses it from the text (its value alone would hide the duplicate).
    expect(parseEnvelope(line('{"id":"a","result":{"k":1,"k":2}}'))).toMatchObject({ kind: 'result', id: 'a', resultJson: '{"k":1,"k":2}' });
  });

  it('hands on a result nested 100,000 deep without recursion', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const envelope = parseEnvelope(line(`{"id":"a","result":${deep}}`));
    expect(envelope).toMatchObject({ kind: 'result', id: 'a', resultJson: deep });
  });

  it("hands on each result's value together with exactly that value's text", () => {
    // Strings full of what the member split must step over: quotes, backslashes, brackets, commas.
    const tricky = ['', '"', '\\', '\\"', '}', ']', ',', '{"id":1}', 'a\nb', '\u0000', 'é😀', '\\\\"x'];
    let seed = 7;
    const pick = <T>(items: readonly T[]): T => items[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % items.length] as T;
    const value = (depth: number): unknown => {
      const kind = depth > 3 ? 0 : pick([0, 1, 2, 3]);
      if (kind === 1) return Array.from({ length: pick([0, 1, 3]) }, () => value(depth + 1));
      if (kind === 2) return Object.fromEntries(Array.from({ length: pick([0, 1, 3]) }, (_, i) => [`${pick(tricky)}${i}`, value(depth + 1)]));
      return pick([pick(tricky), 0, -1.5e3, true, null]);
    };
    for (let i = 0; i < 300; i++) {
      const result = value(0);
      const members = [`"id":"c${i}"`, `"result" : ${JSON.stringify(result, null, pick([0, 2]))} `, `"note":${JSON.stringify(pick(tricky))}`];
      const text = `{ ${pick([true, false]) ? members.join(',') : [...members].reverse().join(' , ')} }`;
      const envelope = parseEnvelope(line(text));
      if (envelope.kind !== 'result') throw new Error(`not a result: ${text}`);
      expect(JSON.parse(envelope.resultJson)).toEqual(result);
      expect(envelope.result).toEqual(result);
    }
  });

  it('bounds an error message', () => {
    const envelope = parseEnvelope(line(JSON.stringify({ id: 'a', error: { message: 'x'.repeat(20_000) } })));
    expect(envelope.kind === 'error' ? envelope.message.length : 0).toBe(MAX_ERROR_MESSAGE_CHARS);
  });
});

describe('splitTopLevelMembers', () => {
  it('returns each member as raw text', () => {
    expect(splitTopLevelMembers('{"a":1,"b":{"c":[true]},"d":"}"}')).toEqual(
      new Map([
        ['a', '1'],
        ['b', '{"c":[true]}'],
        ['d', '"}"'],
      ]),
    );
  });

  it('ends a string at the first quote after an even run of backslashes (0 to 5 of them)', () => {
    for (let run = 0; run <= 5; run++) {
      const value = `${'\\'.repeat(run)}"},]`;
      const text = JSON.stringify({ a: value, b: [value], c: 1 });
      expect(splitTopLevelMembers(text)).toEqual(
        new Map([
          ['a', JSON.stringify(value)],
          ['b', JSON.stringify([value])],
          ['c', '1'],
        ]),
      );
    }
  });

  it('sees an escaped key as the same key', () => {
    expect(splitTopLevelMembers('{"a":1,"\\u0061":2}')).toBe('duplicate');
  });
});

describe('LineSplitter', () => {
  it('joins lines across chunks and keeps the partial tail', () => {
    const splitter = new LineSplitter(100);
    expect(splitter.push(line('ab')).toString()).toBe('');
    expect((splitter.push(line('c\nde\nf')) as Buffer[]).map(String)).toEqual(['abc', 'de']);
    expect((splitter.push(line('\n')) as Buffer[]).map(String)).toEqual(['f']);
  });

  it('reports overflow for a line longer than the cap, with or without its newline', () => {
    expect(new LineSplitter(4).push(line('12345\n'))).toBe('overflow');
    const splitter = new LineSplitter(4);
    expect(splitter.push(line('123'))).toEqual([]);
    expect(splitter.push(line('45'))).toBe('overflow');
  });
});

describe('encodeRequest', () => {
  it('writes one line', () => {
    expect(encodeRequest('c1', { a: 'x\ny' })).toBe('{"id":"c1","args":{"a":"x\\ny"}}\n');
  });
});
