// Every error detail a caller, a log or the journal sees has times in ISO 8601
// and durations in whole milliseconds, whichever stage built it.
import { describe, expect, it } from 'vitest';
import { HostError, readableDetails } from '../../src/errors.js';

describe('error details', () => {
  it('turns epoch-millisecond times into ISO 8601 and float durations into whole milliseconds', () => {
    const error = new HostError('timeout', 'The tool ran past its time limit.', {
      timeoutMs: 1000,
      durationMs: 1000.9163349999999,
      expiresAt: Date.UTC(2026, 11, 6, 5, 0, 0),
      retryAfterMs: 249.5,
      upstream: { startedAt: Date.UTC(2026, 11, 6, 4, 59, 59, 123), elapsedMs: 12.0001 },
      bytes: 1234.5,
      stderrTail: 'at 1765000000000',
    });
    expect(error.details).toEqual({
      timeoutMs: 1000,
      durationMs: 1001,
      expiresAt: '2026-12-06T05:00:00.000Z',
      retryAfterMs: 250,
      upstream: { startedAt: '2026-12-06T04:59:59.123Z', elapsedMs: 12 },
      bytes: 1234.5,
      stderrTail: 'at 1765000000000',
    });
  });

  it('leaves small numbers named …At alone (a count or an offset is not a time)', () => {
    expect(readableDetails({ failedAt: 3, offsetAt: 0 })).toEqual({ failedAt: 3, offsetAt: 0 });
  });

  it('returns details that need nothing as they are', () => {
    const details = { rule: 'policies/r.yaml:4 tools.deny', limit: 5 };
    expect(readableDetails(details)).toBe(details);
  });
});
