// Session counters (SPEC 5.2): the failure run over exactly the codes of 5.2,
// reset by a success; the terminal mark; the budget. One object, so a reload
// that builds new supervisors around it keeps every count.
import { describe, expect, it } from 'vitest';
import type { HostError } from '../../../src/errors.js';
import { ERRORS, type ErrorCode } from '../../../src/errors.js';
import { FAILURE_RUN_CODES, SessionCounters } from '../../../src/supervisor/session-counters.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { SessionLimits, enterSession } from '../../../src/supervisor/stages/session-limits.js';

const CAPS = { maxCallsPerSession: 100, maxConsecutiveFailures: 3 };
const never = new AbortController().signal;
/** The control of a call nobody stops (enterSession reads a call's control). */
const idle = (): CallControl => new CallControl();

function refusal(counters: SessionCounters): Record<string, unknown> {
  try {
    counters.checkOpen(CAPS);
  } catch (error) {
    expect((error as HostError).code).toBe('call_limit');
    return (error as HostError).details;
  }
  throw new Error('the session is still open');
}

describe('SessionCounters', () => {
  it('counts a failure run over the codes of SPEC 5.2 only', () => {
    expect([...FAILURE_RUN_CODES].sort()).toEqual(['invalid_arguments', 'invalid_output', 'memory_limit', 'timeout', 'tool_crashed', 'tool_error']);
    const counters = new SessionCounters();
    for (const code of Object.keys(ERRORS) as ErrorCode[]) if (!FAILURE_RUN_CODES.has(code)) counters.recordFailure(code);
    expect(counters.failureRun).toBe(0);
    counters.recordFailure('tool_error');
    counters.recordFailure('policy_denied');
    counters.recordFailure('timeout');
    counters.checkOpen(CAPS);
    counters.recordFailure('invalid_arguments');
    expect(refusal(counters)).toEqual({ reason: 'consecutive_failures', limit: 3, failures: 3 });
  });

  it('a success resets the run', () => {
    const counters = new SessionCounters();
    counters.recordFailure('tool_error');
    counters.recordFailure('tool_error');
    counters.recordSuccess({ name: 'echo', terminal: false }, 'c1');
    counters.recordFailure('tool_error');
    counters.recordFailure('tool_error');
    expect(counters.failureRun).toBe(2);
    counters.checkOpen(CAPS);
  });

  it("a terminal tool's success closes the session, naming the tool", () => {
    const counters = new SessionCounters();
    counters.recordSuccess({ name: 'finish', terminal: true }, 'call-7');
    expect(refusal(counters)).toEqual({ reason: 'terminal', tool: 'finish', callId: 'call-7' });
  });

  it('one session shared by two SessionLimits (a reload) keeps its budget', async () => {
    const counters = new SessionCounters();
    const before = new SessionLimits(3, 4, 20, counters);
    (await enterSession(before, 'shared', idle()))();
    (await enterSession(before, 'shared', idle()))();
    const after = new SessionLimits(3, 4, 20, counters);
    (await enterSession(after, 'shared', idle()))();
    await expect(enterSession(after, 'shared', idle())).rejects.toMatchObject({ code: 'call_limit', details: { limit: 3 } });
  });

  it('a call queued behind the terminal call is refused once its slot comes', async () => {
    const counters = new SessionCounters();
    const limits = new SessionLimits(100, 4, 20, counters);
    const release = await enterSession(limits, 'exclusive', idle());
    const queued = enterSession(limits, 'exclusive', idle());
    counters.recordSuccess({ name: 'finish', terminal: true }, 'c1');
    release();
    await expect(queued).rejects.toMatchObject({ code: 'call_limit', details: { reason: 'terminal' } });
    // The refused call gave its slot back.
    (await limits.acquire('exclusive', never))();
  });
});
