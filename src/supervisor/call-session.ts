// A session (SPEC section 5.2): a stdio connection, or over HTTP the
// authenticated principal's MCP session. Its limits (call budget, concurrency
// slots) are its own: two principals never share a counter or a slot. The
// protocol layer keeps sessions and hands the one of the caller with each call.
import type { SessionPolicy } from '../policy/types.js';
import { SessionLimits } from './session-limits.js';

export interface CallSession {
  /** Names the session in the journal. */
  readonly id: string;
  /** The authenticated principal (HTTP); null on stdio. */
  readonly principal: string | null;
  readonly limits: SessionLimits;
}

/** A fresh session under the session policy in force. */
export function openCallSession(id: string, principal: string | null, policy: SessionPolicy): CallSession {
  return { id, principal, limits: new SessionLimits(policy.maxCallsPerSession, policy.maxConcurrency) };
}
