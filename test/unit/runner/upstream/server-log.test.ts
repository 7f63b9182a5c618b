import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MAX_SERVER_LOG_LINE_BYTES, MAX_SERVER_LOG_LINE_CHARS, SERVER_LOG_BURST, SERVER_LOG_LINES_PER_SECOND, ServerLog } from '../../../../src/runner/upstream/server-log.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>), done()) });
  return { lines, logger: pino({ level: 'debug' }, sink) };
}

const SECRET = 'sk-live-0123456789abcdef';
const redact = (text: string, maxChars: number) => text.replaceAll(SECRET, '[redacted]').slice(0, maxChars);

describe("ServerLog (an upstream server's stderr and log messages into the host's log)", () => {
  it('logs each stderr line, across chunks, redacted; the last line without a newline at the end', () => {
    const { lines, logger } = capture();
    const log = new ServerLog({ logger, server: 'fs:read_only', redact });
    log.stderr(Buffer.from('Secure MCP Filesystem Server running on stdio\nkey '));
    log.stderr(Buffer.from(`${SECRET}\r\n\n`));
    log.stderr(Buffer.from('no newline'));
    expect(lines.map((line) => line['stderr'])).toEqual(['Secure MCP Filesystem Server running on stdio', 'key [redacted]']);
    log.end();
    expect(lines.map((line) => line['stderr'])).toEqual(['Secure MCP Filesystem Server running on stdio', 'key [redacted]', 'no newline']);
    expect(lines[0]).toMatchObject({ server: 'fs:read_only', msg: 'upstream server stderr', level: 30 });
    expect(JSON.stringify(lines)).not.toContain(SECRET);
  });

  it('keeps at most MAX_SERVER_LOG_LINE_BYTES of a line while it arrives and writes at most MAX_SERVER_LOG_LINE_CHARS', () => {
    const { lines, logger } = capture();
    const log = new ServerLog({ logger, server: 's' });
    const chunk = Buffer.alloc(1 << 20, 'e');
    for (let i = 0; i < 16; i++) log.stderr(chunk);
    log.stderr(Buffer.from('\nnext\n'));
    expect(lines).toHaveLength(2);
    expect(String(lines[0]?.['stderr']).length).toBe(MAX_SERVER_LOG_LINE_CHARS);
    expect(lines[0]).toMatchObject({ cut: true });
    expect(lines[1]).toMatchObject({ stderr: 'next' });
    expect(MAX_SERVER_LOG_LINE_BYTES).toBeGreaterThanOrEqual(MAX_SERVER_LOG_LINE_CHARS);
  });

  it('maps notifications/message levels onto pino levels, data as JSON, redacted and bounded', () => {
    const { lines, logger } = capture();
    const log = new ServerLog({ logger, server: 'ev:declared', redact });
    log.message({ level: 'warning', logger: 'roots', data: { note: `token ${SECRET}` } });
    log.message({ level: 'emergency', data: 'x'.repeat(100_000) });
    log.message({ level: 'nonsense', data: 'plain' });
    expect(lines.map((line) => line['level'])).toEqual([40, 50, 30]);
    expect(lines[0]).toMatchObject({ server: 'ev:declared', upstreamLevel: 'warning', upstreamLogger: 'roots', data: '{"note":"token [redacted]"}', msg: 'upstream server log' });
    expect(String(lines[1]?.['data']).length).toBe(MAX_SERVER_LOG_LINE_CHARS);
    expect(lines[2]).toMatchObject({ data: 'plain', upstreamLevel: 'nonsense' });
  });

  it('rate-limits a flood: SERVER_LOG_BURST lines at once, then SERVER_LOG_LINES_PER_SECOND, and says how many it dropped', () => {
    const { lines, logger } = capture();
    let nowMs = 0;
    const log = new ServerLog({ logger, server: 's', now: () => nowMs });
    for (let i = 0; i < 10_000; i++) log.message({ level: 'info', data: `line ${i}` });
    log.stderr(Buffer.from('x\n'.repeat(10_000)));
    expect(lines).toHaveLength(SERVER_LOG_BURST + 1);
    expect(lines.at(-1)).toMatchObject({ msg: 'upstream server logs too much: dropping lines', level: 40 });
    nowMs += 1000;
    log.message({ level: 'info', data: 'after a second' });
    expect(lines.at(-2)).toMatchObject({ dropped: 20_000 - SERVER_LOG_BURST, level: 40 });
    expect(lines.at(-1)).toMatchObject({ data: 'after a second' });
    for (let i = 0; i < 100; i++) log.message({ level: 'info', data: 'more' });
    // One token was spent above; the rest of the second's refill, then drops again.
    expect(lines.filter((line) => line['data'] === 'more')).toHaveLength(SERVER_LOG_LINES_PER_SECOND - 1);
    log.end();
    expect(lines.at(-1)).toMatchObject({ dropped: 100 - (SERVER_LOG_LINES_PER_SECOND - 1) });
  });
});
