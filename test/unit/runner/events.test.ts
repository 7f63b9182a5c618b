import { describe, expect, it } from 'vitest';
import { EVENT_LIMITS } from '../../../sandbox/shared/limits.mjs';
import { createSilentLogger } from '../../../src/log.js';
import { CallEvents } from '../../../src/runner/events.js';
import type { ProgressEvent, SandboxDenial, ToolLogLevel } from '../../../src/runner/run-types.js';

function collecting() {
  const progress: ProgressEvent[] = [];
  const logs: Array<[ToolLogLevel, string]> = [];
  const denials: SandboxDenial[] = [];
  const events = new CallEvents({
    options: { onProgress: (event) => progress.push(event), onLog: (level, message) => logs.push([level, message]), onDenied: (denial) => denials.push(denial) },
    logger: createSilentLogger(),
    facts: { tool: 't' },
  });
  return { events, progress, logs, denials };
}

describe("CallEvents (a call's progress, log and denial events, bounded per call for every runner)", () => {
  it('passes progress, total and message on; drops values that are not finite numbers', () => {
    const { events, progress } = collecting();
    events.progress({ progress: 1, total: 4, message: 'one' });
    events.progress({ progress: Number.NaN });
    events.progress({ progress: '2' });
    events.progress(null);
    events.progress({ progress: 2, total: Number.POSITIVE_INFINITY, message: 7 });
    expect(progress).toEqual([{ progress: 1, total: 4, message: 'one' }, { progress: 2 }]);
  });

  it('passes at most maxEventsPerCall events, cuts messages, and stops messages past the byte budget', () => {
    const { events, progress } = collecting();
    for (let i = 0; i < 10_000; i++) events.progress({ progress: i, message: 'm'.repeat(10_000) });
    expect(progress).toHaveLength(EVENT_LIMITS.maxEventsPerCall);
    expect(progress[0]?.message?.length).toBe(EVENT_LIMITS.maxMessageChars);
    const withMessage = progress.filter((event) => event.message !== undefined).length;
    expect(withMessage).toBe(Math.floor(EVENT_LIMITS.maxEventBytesPerCall / EVENT_LIMITS.maxMessageChars));
    expect(progress.at(-1)).toEqual({ progress: EVENT_LIMITS.maxEventsPerCall - 1 });
  });

  it('reads a level that is not one as info, drops a log line that is not text, and counts logs with progress', () => {
    const { events, logs, progress } = collecting();
    events.log('warn', 'careful');
    events.log('loud', 'shout');
    events.log('info', { not: 'text' });
    expect(logs).toEqual([
      ['warn', 'careful'],
      ['info', 'shout'],
    ]);
    for (let i = 0; i < EVENT_LIMITS.maxEventsPerCall; i++) events.progress({ progress: i });
    expect(progress).toHaveLength(EVENT_LIMITS.maxEventsPerCall - 2);
    events.log('info', 'past the bound');
    expect(logs).toHaveLength(2);
  });

  it('drops log lines once the messages passed the byte budget', () => {
    const { events, logs } = collecting();
    for (let i = 0; i < 100; i++) events.log('info', 'x'.repeat(EVENT_LIMITS.maxMessageChars));
    expect(logs).toHaveLength(Math.floor(EVENT_LIMITS.maxEventBytesPerCall / EVENT_LIMITS.maxMessageChars));
  });

  it('reports at most maxDenialsPerCall refusals, each field cut to its bound', () => {
    const { events, denials } = collecting();
    events.denied({ op: 'readText', target: 't'.repeat(10_000), reason: 'outside_roots' });
    events.denied('not a denial');
    for (let i = 0; i < 2 * EVENT_LIMITS.maxDenialsPerCall; i++) events.denied({ op: 'o'.repeat(100), target: String(i), reason: 7 });
    expect(denials).toHaveLength(EVENT_LIMITS.maxDenialsPerCall);
    expect(denials[0]).toEqual({ op: 'readText', target: 't'.repeat(EVENT_LIMITS.maxTargetChars), reason: 'outside_roots' });
    expect(denials[1]).toEqual({ op: 'o'.repeat(EVENT_LIMITS.maxCodeChars), target: '0', reason: '' });
  });

  it("writes a log line to the host's log when the call has no onLog", () => {
    const lines: unknown[] = [];
    const logger = createSilentLogger();
    logger.debug = ((facts: unknown, message: unknown) => void lines.push([facts, message])) as typeof logger.debug;
    new CallEvents({ options: {}, logger, facts: { callId: 'c' } }).log('debug', 'quiet');
    expect(lines).toEqual([[{ callId: 'c', level: 'debug' }, 'quiet']]);
  });
});
