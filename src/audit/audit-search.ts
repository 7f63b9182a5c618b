// The audit search (`toolhost audit` and the console): filters as people type
// them, checked, turned into a CallFilter, and run against the journal.
import { CALL_STATUSES, type CallFilter, type CallRecord, type CallStatus } from './call-record.js';
import type { Journal } from './journal.js';
import { parseSince } from './since.js';

/** The filters as given (command-line values, a console form): every one optional. */
export interface AuditSearchInput {
  readonly tool?: string | undefined;
  readonly status?: string | undefined;
  readonly principal?: string | undefined;
  readonly decision?: string | undefined;
  readonly code?: string | undefined;
  /** Records whose rule contains this text. */
  readonly rule?: string | undefined;
  /** ISO 8601, or a duration back from now (30s, 15m, 1h, 2d, 1w). */
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  /** At most this many records; 0 or absent: all. */
  readonly limit?: number | undefined;
}

export const DECISIONS = ['allow', 'deny', 'ask', 'would_deny'] as const;

/** A filter that does not parse: which one, and what it takes. */
export class AuditFilterError extends Error {
  constructor(
    readonly filter: keyof AuditSearchInput,
    message: string,
  ) {
    super(message);
    this.name = 'AuditFilterError';
  }
}

/** The CallFilter of the input; throws AuditFilterError naming the filter that does not parse. */
function parseAuditFilter(input: AuditSearchInput, nowMs = Date.now()): CallFilter {
  const filter: CallFilter = {};
  if (input.status !== undefined && !CALL_STATUSES.includes(input.status as CallStatus)) {
    throw new AuditFilterError('status', `--status must be one of ${CALL_STATUSES.join(', ')}; got "${input.status}"`);
  }
  if (input.decision !== undefined && !(DECISIONS as readonly string[]).includes(input.decision)) {
    throw new AuditFilterError('decision', `--decision must be one of ${DECISIONS.join(', ')}; got "${input.decision}"`);
  }
  for (const [name, value] of [
    ['tool', input.tool],
    ['status', input.status],
    ['principal', input.principal],
    ['decision', input.decision],
    ['code', input.code],
    ['rule', input.rule],
  ] as const) {
    if (value !== undefined) filter[name] = value;
  }
  for (const name of ['since', 'until'] as const) {
    const text = input[name];
    if (text === undefined) continue;
    const ms = parseSince(text, nowMs);
    if (ms === undefined) throw new AuditFilterError(name, `--${name} takes an ISO 8601 time or a duration such as 30s, 15m, 1h, 2d, 1w; got "${text}"`);
    filter[name] = ms;
  }
  if (input.limit !== undefined && input.limit > 0) filter.limit = input.limit;
  return filter;
}

/** The records that match, newest first. */
export async function searchAudit(journal: Pick<Journal, 'query'>, input: AuditSearchInput, nowMs = Date.now()): Promise<CallRecord[]> {
  return journal.query(parseAuditFilter(input, nowMs));
}
