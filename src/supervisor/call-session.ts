// An HTTP caller's session (SPEC sections 5.2 and 6.1): the authenticated
// principal's MCP session. Its counters (budget, failure run, terminal) are a
// SessionCounters of its own, and so are its concurrency slots, so
// `maxConcurrency` holds per principal and no principal can use up another's.
// The protocol layer keeps one per principal and hands it in with each call;
// stdio calls bring none and count against the supervisor's own session.
import type { SessionPolicy } from '../policy/types.js';
import { SessionCounters } from './session-counters.js';
import { SessionLimits } from './stages/session-limits.js';

/** Who a call is for: the counters it counts against and, over HTTP, the principal and its slots. */
export interface Caller {
  /** The authenticated principal; null for a caller without one (`toolhost fuzz`). */
  readonly principal: string | null;
  /** Names the session in the journal (`counters.id`); outlives a reload. */
  readonly counters: SessionCounters;
  /** The caller's own concurrency slots; absent: the supervisor's own. */
  readonly limits?: SessionLimits;
}

/** An HTTP principal's session: a Caller with its principal and slots. */
export interface CallSession extends Caller {
  readonly principal: string;
  /** The principal's own concurrency slots, with the caps in force when it first called. */
  readonly limits: SessionLimits;
}

/** A fresh session for `principal` under the session policy in force. */
export function openCallSession(principal: string, policy: SessionPolicy): CallSession {
  const counters = new SessionCounters();
  return { principal, counters, limits: new SessionLimits(policy.maxCallsPerSession, policy.maxConcurrency, policy.maxConsecutiveFailures, counters) };
}
