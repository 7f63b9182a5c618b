// A call's record as the one row both stores insert: its values in the order of
// CALL_ROW_COLUMNS, built in one array (no object per field group, no spread).
// The SQLite store queues these rows for its batches and hands them to its
// writer thread as they are (an array of primitives clones cheaply); PostgreSQL
// sends the same values as a statement's parameters.
import type { CallFinish, CallStart } from './call-record.js';

/** The columns of a call's INSERT, in the order of callRowValues. */
export const CALL_ROW_COLUMNS = `id, host_id, session_id, principal, tool, args_hash, side_effect, decision, rule, approval, idempotency_key,
     status, error_code, result_hash, result_bytes, replay, started_at, ended_at, egress_admitted, egress_refused,
     policy_digest, definition_digest, approved_by, approver_name, arguments`;

/** How many values a row has. */
export const CALL_ROW_ARITY = 25;

/** A row of CALL_ROW_COLUMNS; its first value is the call id. */
export type CallRowValues = readonly unknown[];

/** The outcome half of a row: a finished call's, or nothing yet for a write-ahead `started` record. */
type RowEnd = Pick<CallFinish, 'errorCode' | 'resultHash' | 'resultBytes' | 'replay' | 'egressAdmitted' | 'egressRefused'> & {
  readonly status: CallFinish['status'] | 'started';
  readonly endedAt: number | null;
};

/** A write-ahead record has no outcome yet (its egress counts too are null until the call ends). */
const NOT_ENDED: RowEnd = { status: 'started', errorCode: null, resultHash: null, resultBytes: null, replay: null, endedAt: null };

/** The one record of a finished call (refused, read-only, replayed); absent egress counts are 0. */
export function callRowValues(start: CallStart, finish: CallFinish, hostId: string): unknown[] {
  return rowValues(start, finish, hostId, 0);
}

/** The write-ahead `started` record of a call about to run. */
export function startedRowValues(start: CallStart, hostId: string): unknown[] {
  return rowValues(start, NOT_ENDED, hostId, null);
}

function rowValues(start: CallStart, end: RowEnd, hostId: string, noEgress: 0 | null): unknown[] {
  return [
    start.id,
    hostId,
    start.sessionId,
    start.principal,
    start.tool,
    start.argsHash,
    start.sideEffect,
    start.decision,
    start.rule,
    start.approval,
    start.idempotencyKey,
    end.status,
    end.errorCode,
    end.resultHash,
    end.resultBytes,
    end.replay,
    start.startedAt,
    end.endedAt,
    end.egressAdmitted ?? noEgress,
    end.egressRefused ?? noEgress,
    start.policyDigest ?? null,
    start.definitionDigest ?? null,
    start.approvedBy ?? null,
    start.approverName ?? null,
    start.arguments ?? null,
  ];
}
