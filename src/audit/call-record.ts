// The shapes of the journal's call records (SPEC section 7) and their mapping
// from SQLite rows. Arguments and results are kept as hashes and sizes; only
// calls with an idempotency key keep their serialized result, to replay it.

/** Where a call stands. `started` is written before a non-read-only call runs. */
export type CallStatus = 'started' | 'completed' | 'failed' | 'interrupted' | 'rejected' | 'denied' | 'cancelled' | 'skipped';

export const CALL_STATUSES: readonly CallStatus[] = ['started', 'completed', 'failed', 'interrupted', 'rejected', 'denied', 'cancelled', 'skipped'];

/** What is known when a call is decided, before it runs. Times are ms since the epoch. */
export interface CallStart {
  id: string;
  sessionId: string;
  /** The authenticated principal (HTTP, SPEC section 6.1); null on stdio and for `toolhost call`. */
  principal: string | null;
  tool: string;
  /** sha256 hex of the canonical JSON of the arguments (see hashArgs). */
  argsHash: string;
  /** The enforced side-effect class; null when the call never got that far (unknown tool). */
  sideEffect: string | null;
  decision: 'allow' | 'deny' | 'ask' | 'would_deny';
  /** The rule that decided, as `file:line key`; null for the built-in baseline. */
  rule: string | null;
  approval: 'not_needed' | 'approved' | 'denied' | 'required' | null;
  /** `_meta.idempotencyKey`, scoped per tool; null when the call had none. */
  idempotencyKey: string | null;
  startedAt: number;
  /** sha256 hex of the merged policy in force (RFC 8785 JSON); absent or null when unknown. */
  policyDigest?: string | null;
  /** sha256 hex of the tool's definition (src/registry/definition-digest.ts); null for an unknown tool. */
  definitionDigest?: string | null;
  /** Who approved the call: the client (elicitation, input_required), an operator, or nobody (null). */
  approvedBy?: ApprovedBy | null;
  /** The operator's name when an operator approved it; null otherwise. */
  approverName?: string | null;
  /** The redacted, bounded arguments as JSON text, kept only under `journal.arguments: redacted`; else null. */
  arguments?: string | null;
}

/** Who approved a call. */
export type ApprovedBy = 'client' | 'operator';

/** How a call ended. */
export interface CallFinish {
  status: Exclude<CallStatus, 'started' | 'interrupted'>;
  /** A SPEC section 5 code; null on success. */
  errorCode: string | null;
  /** sha256 hex of the result payload; null when there is none. */
  resultHash: string | null;
  resultBytes: number | null;
  /** The serialized MCP result, stored only for calls with an idempotency key (replayed on repeat). */
  replay: string | null;
  endedAt: number;
  /** Network attempts of the call (egress proxy, ctx.fetch) that were admitted; absent: 0. */
  egressAdmitted?: number;
  /** Network attempts of the call that were refused; absent: 0. */
  egressRefused?: number;
}

/** An operator's decision on an interrupted call (toolhost reconcile). */
export type Reconciliation = 'rerun' | 'skip';

/** One call as the journal holds it (without the replay payload). */
export interface CallRecord extends CallStart {
  policyDigest: string | null;
  definitionDigest: string | null;
  approvedBy: ApprovedBy | null;
  approverName: string | null;
  arguments: string | null;
  /** The host process that ran it. */
  hostId: string;
  status: CallStatus;
  errorCode: string | null;
  resultHash: string | null;
  resultBytes: number | null;
  /** ms since the epoch; null while `started` and for `interrupted` calls (their end is unknown). */
  endedAt: number | null;
  reconciliation: Reconciliation | null;
  reconciledAt: number | null;
  /** Admitted network attempts; null for records from before the column existed. */
  egressAdmitted: number | null;
  egressRefused: number | null;
}

/** What governs an idempotency key (see Journal.findByIdempotencyKey). */
export interface IdempotencyRecord {
  id: string;
  status: CallStatus;
  argsHash: string;
  replay: string | null;
  reconciliation: Reconciliation | null;
}

/** Filters of Journal.query; all optional, combined with AND. */
export interface CallFilter {
  tool?: string;
  status?: string;
  principal?: string;
  decision?: string;
  /** The error code (SPEC section 5). */
  code?: string;
  /** Records whose rule contains this text (`sideEffects.deny`, `policies/org.yaml:12`). */
  rule?: string;
  /** Only calls started at or after this time (ms since the epoch). */
  since?: number;
  /** Only calls started before this time (ms since the epoch). */
  until?: number;
  /** At most this many records, newest first; undefined means all. */
  limit?: number;
}

/** Column list matching CallRow. */
export const CALL_COLUMNS = `id, host_id, session_id, principal, tool, args_hash, side_effect, decision, rule, approval,
  idempotency_key, status, error_code, result_hash, result_bytes, started_at, ended_at, reconciliation, reconciled_at,
  egress_admitted, egress_refused, policy_digest, definition_digest, approved_by, approver_name, arguments`;

export interface CallRow {
  id: string;
  host_id: string;
  session_id: string;
  principal: string | null;
  tool: string;
  args_hash: string;
  side_effect: string | null;
  decision: CallStart['decision'];
  rule: string | null;
  approval: CallStart['approval'];
  idempotency_key: string | null;
  status: CallStatus;
  error_code: string | null;
  result_hash: string | null;
  result_bytes: number | null;
  started_at: number;
  ended_at: number | null;
  reconciliation: Reconciliation | null;
  reconciled_at: number | null;
  egress_admitted: number | null;
  egress_refused: number | null;
  policy_digest: string | null;
  definition_digest: string | null;
  approved_by: ApprovedBy | null;
  approver_name: string | null;
  arguments: string | null;
}

/** Maps a row of CALL_COLUMNS to a CallRecord. */
export function toCallRecord(row: CallRow): CallRecord {
  return {
    id: row.id,
    hostId: row.host_id,
    sessionId: row.session_id,
    principal: row.principal,
    tool: row.tool,
    argsHash: row.args_hash,
    sideEffect: row.side_effect,
    decision: row.decision,
    rule: row.rule,
    approval: row.approval,
    idempotencyKey: row.idempotency_key,
    status: row.status,
    errorCode: row.error_code,
    resultHash: row.result_hash,
    resultBytes: row.result_bytes,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    reconciliation: row.reconciliation,
    reconciledAt: row.reconciled_at,
    egressAdmitted: row.egress_admitted,
    egressRefused: row.egress_refused,
    policyDigest: row.policy_digest,
    definitionDigest: row.definition_digest,
    approvedBy: row.approved_by,
    approverName: row.approver_name,
    arguments: row.arguments,
  };
}
