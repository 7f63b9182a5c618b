// A JSON-RPC request id as MCP accepts it: a string or an integer (the SDKs'
// RequestIdSchema). One test for the host's own readers of raw messages, the
// stdio fast path and the HTTP sessions' bookkeeping of unanswered requests.
import type { RequestId } from '@modelcontextprotocol/server';

/** A string, or a number the SDK's schema takes as an integer id (a safe integer: a larger one does not round-trip). */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}
