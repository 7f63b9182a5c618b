import { describe, expect, it } from 'vitest';
import { IGNORED_LOG_WINDOW_MS, IgnoredOutputLog, MAX_IGNORED_LOG_LINES } from '../../../../src/runner/process/unsolicited.js';
import { recordingLogger } from '../../../helpers/recording-logger.js';

describe('IgnoredOutputLog (rate-limited logging of unsolicited output)', () => {
  it('logs at most MAX_IGNORED_LOG_LINES per window and reports how many it left out', () => {
    const recorded = recordingLogger();
    let nowMs = 0;
    const log = new IgnoredOutputLog(recorded.logger, 'tool', () => nowMs);
    for (let i = 0; i < 10_000; i++) log.note('result');
    expect(recorded.lines()).toHaveLength(MAX_IGNORED_LOG_LINES);
    nowMs += IGNORED_LOG_WINDOW_MS;
    log.note('progress');
    expect(recorded.lines()).toHaveLength(MAX_IGNORED_LOG_LINES + 1);
    expect(recorded.lines().at(-1)).toMatchObject({ tool: 'tool', kind: 'progress', suppressedLines: 10_000 - MAX_IGNORED_LOG_LINES });
  });
});
