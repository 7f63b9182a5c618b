// What a chained fact holds for a call or an approval: every field of its row,
// the replay payload as its hash (the payload itself can be large; its hash
// proves it). Built from the values a write inserts (no read back) or from a
// row the database returned (an update's RETURNING, or `audit verify` reading
// the tables), through one field list, so the two cannot disagree.
import type { ApprovalRecord } from '../approval-record.js';
import type { CallRecord } from '../call-record.js';
import type { CallRowValues } from '../call-row.js';
import { canonicalFlatJson, flatKeys } from '../../config/canonical-json.js';
import { sha256Hex } from '../hash.js';
import type { ChainFact } from './chain-writer.js';

/** A call as chained: its row's fields in camelCase, `replay` as `replayHash`. */
export interface ChainedCall {
  readonly id: string;
  readonly hostId: string;
  readonly sessionId: string;
  readonly principal: string | null;
  readonly tool: string;
  readonly argsHash: string;
  readonly sideEffect: string | null;
  readonly decision: string;
  readonly rule: string | null;
  readonly approval: string | null;
  readonly idempotencyKey: string | null;
  readonly status: string;
  readonly errorCode: string | null;
  readonly resultHash: string | null;
  readonly resultBytes: number | null;
  readonly replayHash: string | null;
  readonly startedAt: number;
  readonly endedAt: number | null;
  readonly egressAdmitted: number | null;
  readonly egressRefused: number | null;
  readonly policyDigest: string | null;
  readonly definitionDigest: string | null;
  readonly approvedBy: string | null;
  readonly approverName: string | null;
  readonly arguments: string | null;
  readonly reconciliation: string | null;
  readonly reconciledAt: number | null;
}

/** Revisions of a call's facts: its first record, its end (finish or interrupted), its reconciliation. */
export const CALL_REV = { first: 0, ended: 1, reconciled: 2 } as const;
/** Revisions of an approval's facts: created, decided, spent. */
export const APPROVAL_REV = { created: 0, decided: 1, spent: 2 } as const;

/** The chained call of a row of callRowValues (a new row: not reconciled). */
export function chainedCallOfValues(values: CallRowValues): ChainedCall {
  const v = values;
  return {
    id: v[0] as string,
    hostId: v[1] as string,
    sessionId: v[2] as string,
    principal: v[3] as string | null,
    tool: v[4] as string,
    argsHash: v[5] as string,
    sideEffect: v[6] as string | null,
    decision: v[7] as string,
    rule: v[8] as string | null,
    approval: v[9] as string | null,
    idempotencyKey: v[10] as string | null,
    status: v[11] as string,
    errorCode: v[12] as string | null,
    resultHash: v[13] as string | null,
    resultBytes: v[14] as number | null,
    replayHash: replayHashOf(v[15] as string | null),
    startedAt: v[16] as number,
    endedAt: v[17] as number | null,
    egressAdmitted: v[18] as number | null,
    egressRefused: v[19] as number | null,
    policyDigest: v[20] as string | null,
    definitionDigest: v[21] as string | null,
    approvedBy: v[22] as string | null,
    approverName: v[23] as string | null,
    arguments: v[24] as string | null,
    reconciliation: null,
    reconciledAt: null,
  };
}

/** The chained call of a record read from the table, with its replay payload. */
export function chainedCallOfRecord(record: CallRecord, replay: string | null): ChainedCall {
  return {
    id: record.id,
    hostId: record.hostId,
    sessionId: record.sessionId,
    principal: record.principal,
    tool: record.tool,
    argsHash: record.argsHash,
    sideEffect: record.sideEffect,
    decision: record.decision,
    rule: record.rule,
    approval: record.approval,
    idempotencyKey: record.idempotencyKey,
    status: record.status,
    errorCode: record.errorCode,
    resultHash: record.resultHash,
    resultBytes: record.resultBytes,
    replayHash: replayHashOf(replay),
    startedAt: record.startedAt,
    endedAt: record.endedAt,
    egressAdmitted: record.egressAdmitted,
    egressRefused: record.egressRefused,
    policyDigest: record.policyDigest,
    definitionDigest: record.definitionDigest,
    approvedBy: record.approvedBy,
    approverName: record.approverName,
    arguments: record.arguments,
    reconciliation: record.reconciliation,
    reconciledAt: record.reconciledAt,
  };
}

/** The keys of a ChainedCall in RFC 8785 order (UTF-16 code units: plain ASCII names sort as strings do). */
const CHAINED_CALL_KEYS = flatKeys(Object.keys(chainedCallOfValues(new Array(25).fill(null))).sort());

/** The RFC 8785 text of a chained call (its fields are flat: strings, numbers, null). */
export function chainedCallText(call: ChainedCall): string {
  return canonicalFlatJson(call as unknown as Record<string, unknown>, CHAINED_CALL_KEYS);
}

/** The fact of a call record at revision `rev`. */
export function callFact(call: ChainedCall, rev: number): ChainFact {
  return { kind: 'call', ref: call.id, rev, record: call, text: chainedCallText(call) };
}

/** The fact of an approval as it stands, at revision `rev`. */
export function approvalFact(approval: ApprovalRecord, rev: number): ChainFact {
  return { kind: 'approval', ref: approval.id, rev, record: { ...approval } };
}

function replayHashOf(replay: string | null): string | null {
  return replay === null ? null : sha256Hex(replay);
}
