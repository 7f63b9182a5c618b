import { describe, expect, it } from 'vitest';
import { LineReader } from '../../../src/protocol/line-reader.js';

function collect(maxLineBytes: number) {
  const events: string[] = [];
  const reader = new LineReader(maxLineBytes, {
    line: (bytes) => events.push(`line:${Buffer.from(bytes).toString()}`),
    oversized: (prefix) => events.push(`oversized:${prefix.byteLength}:${Buffer.from(prefix).toString().slice(0, 8)}`),
  });
  return { events, reader };
}

describe('LineReader', () => {
  it('splits lines across chunks and strips a trailing carriage return', () => {
    const { events, reader } = collect(100);
    reader.push(Buffer.from('{"a":'));
    reader.push(Buffer.from('1}\r\n{"b":2}\n{"c"'));
    reader.push(Buffer.from(':3}\n'));
    expect(events).toEqual(['line:{"a":1}', 'line:{"b":2}', 'line:{"c":3}']);
  });

  it('skips blank lines', () => {
    const { events, reader } = collect(100);
    reader.push(Buffer.from('\n  \n\r\n{"a":1}\n'));
    expect(events).toEqual(['line:{"a":1}']);
  });

  it('reports an oversized line once, as soon as it passes the cap, and drops its tail', () => {
    const { events, reader } = collect(10);
    reader.push(Buffer.from('{"id":1,"x'));
    expect(events).toEqual([]);
    reader.push(Buffer.from('yyyyyyyy'));
    expect(events).toEqual(['oversized:18:{"id":1,']);
    reader.push(Buffer.from('zzzzzzzzzzzzzzzz'));
    reader.push(Buffer.from('zz\n{"ok":1}\n'));
    expect(events).toEqual(['oversized:18:{"id":1,', 'line:{"ok":1}']);
  });

  it('counts the cap in bytes, not characters', () => {
    const { events, reader } = collect(4);
    reader.push(Buffer.from('éé\n'));
    reader.push(Buffer.from('ééé\n'));
    expect(events).toEqual(['line:éé', 'oversized:6:ééé']);
  });

  it('delivers a last line without a newline at end of input', () => {
    const { events, reader } = collect(100);
    reader.push(Buffer.from('{"a":1}\n{"b":2}'));
    reader.end();
    expect(events).toEqual(['line:{"a":1}', 'line:{"b":2}']);
  });

  it('whole lines inside one chunk (the fast path): over the cap, CRLF, blank, then a partial line', () => {
    const { events, reader } = collect(10);
    reader.push(Buffer.from('{"a":1}\r\n{"id":2,"xxxxxxx"}\n \r\n\r\n{"b":2}\n{"c"'));
    expect(events).toEqual(['line:{"a":1}', 'oversized:18:{"id":2,', 'line:{"b":2}']);
    reader.push(Buffer.from(':3}\n'));
    expect(events).toEqual(['line:{"a":1}', 'oversized:18:{"id":2,', 'line:{"b":2}', 'line:{"c":3}']);
  });

  it('hands a whole line on as a view of the chunk, not a copy', () => {
    const lines: Uint8Array[] = [];
    const reader = new LineReader(100, { line: (bytes) => lines.push(bytes), oversized: () => undefined });
    const chunk = Buffer.from('{"a":1}\n{"b":2}\n');
    reader.push(chunk);
    expect(lines.map((line) => [line.buffer === chunk.buffer, line.byteOffset - chunk.byteOffset, line.byteLength])).toEqual([
      [true, 0, 7],
      [true, 8, 7],
    ]);
  });
});
