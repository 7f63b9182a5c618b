import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { IGNORED_LOG_WINDOW_MS, IgnoredOutputLog, MAX_IGNORED_LOG_LINES } from '../../../../src/runner/process/unsolicited.js';

describe('IgnoredOutputLog (rate-limited logging of unsolicited output)', () => {
  it('logs at most MAX_IGNORED_LOG_LINES per window and reports how many it left out', () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>), done()) });
    let nowMs = 0;
    const log = new IgnoredOutputLog(pino(sink), 'tool', () => nowMs);
    for (let i = 0; i < 10_000; i++) log.note('result');
    expect(lines).toHaveLength(MAX_IGNORED_LOG_LINES);
    nowMs += IGNORED_LOG_WINDOW_MS;
    log.note('progress');
    expect(lines).toHaveLength(MAX_IGNORED_LOG_LINES + 1);
    expect(lines.at(-1)).toMatchObject({ tool: 'tool', kind: 'progress', suppressedLines: 10_000 - MAX_IGNORED_LOG_LINES });
  });
});
