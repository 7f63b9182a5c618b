import { describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../../../src/runner/run-types.js';
import { UPSTREAM_PROGRESS_LIMITS, gateProgress } from '../../../../src/runner/upstream/progress-gate.js';

describe('gateProgress (an upstream server\'s progress, bounded per call)', () => {
  it('is undefined when nobody listens', () => {
    expect(gateProgress(undefined)).toBeUndefined();
  });

  it('passes progress, total and message on; drops values that are not finite numbers', () => {
    const seen: ProgressEvent[] = [];
    const gate = gateProgress((event) => seen.push(event))!;
    gate({ progress: 1, total: 4, message: 'one' });
    gate({ progress: Number.NaN });
    gate({ progress: '2' });
    gate(null);
    gate({ progress: 2, total: Number.POSITIVE_INFINITY, message: 7 });
    expect(seen).toEqual([{ progress: 1, total: 4, message: 'one' }, { progress: 2 }]);
  });

  it('passes at most maxEventsPerCall events, cuts messages, and stops messages past the byte budget', () => {
    const seen: ProgressEvent[] = [];
    const gate = gateProgress((event) => seen.push(event))!;
    for (let i = 0; i < 10_000; i++) gate({ progress: i, message: 'm'.repeat(10_000) });
    expect(seen).toHaveLength(UPSTREAM_PROGRESS_LIMITS.maxEventsPerCall);
    expect(seen[0]?.message?.length).toBe(UPSTREAM_PROGRESS_LIMITS.maxMessageChars);
    const withMessage = seen.filter((event) => event.message !== undefined).length;
    expect(withMessage).toBe(Math.floor(UPSTREAM_PROGRESS_LIMITS.maxMessageBytesPerCall / UPSTREAM_PROGRESS_LIMITS.maxMessageChars));
    expect(seen.at(-1)).toEqual({ progress: UPSTREAM_PROGRESS_LIMITS.maxEventsPerCall - 1 });
  });
});
