// The named (prepared) statements of the PostgreSQL journal. pg prepares a
// named statement once per connection and reuses the plan afterwards.
import { APPROVAL_COLUMNS } from '../approval-record.js';
import { CALL_COLUMNS } from '../call-record.js';
import { CALL_ROW_ARITY, CALL_ROW_COLUMNS } from '../call-row.js';

export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

/** Columns of SQL.insertCall, in the order of its values (call-row.ts builds them). */
const INSERT_CALL_COLUMNS = CALL_ROW_COLUMNS;
const INSERT_CALL_ARITY = CALL_ROW_ARITY;

/** A multi-row SQL.insertCall for `rows` calls (values row after row): one statement, one transaction. */
export function insertCallsText(rows: number): string {
  const tuples = Array.from({ length: rows }, (_, row) => `(${Array.from({ length: INSERT_CALL_ARITY }, (_, column) => `$${row * INSERT_CALL_ARITY + column + 1}`).join(', ')})`);
  return `INSERT INTO calls (${INSERT_CALL_COLUMNS}) VALUES ${tuples.join(', ')}`;
}

const statement = (name: string, text: string): NamedStatement => ({ name: `toolhost_${name}`, text });

/** A multi-row INSERT of `rows` chain entries (values of entryRowValues, row after row). */
export function insertEntriesText(rows: number): string {
  const tuples = Array.from({ length: rows }, (_, row) => `(${Array.from({ length: 9 }, (_, column) => `$${row * 9 + column + 1}`).join(', ')})`);
  return `INSERT INTO chain_entries (chain_id, seq, prev, hash, kind, ref, rev, at, record) VALUES ${tuples.join(', ')}`;
}

/** Statements by purpose; $n placeholders in the order their callers pass values. */
export const SQL = {
  insertHost: statement(
    'insert_host',
    `INSERT INTO hosts (id, pid, machine, session_id, started_at, lease_expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond')`,
  ),
  renewLease: statement('renew_lease', `UPDATE hosts SET lease_expires_at = now() + $2 * interval '1 millisecond' WHERE id = $1 AND ended_at IS NULL`),
  // One statement: the hosts whose lease ran out end, and their started calls become interrupted.
  expireLeases: statement(
    'expire_leases',
    `WITH expired AS (
       UPDATE hosts SET ended_at = $1, end_reason = 'expired'
       WHERE ended_at IS NULL AND lease_expires_at < now()
       RETURNING id)
     UPDATE calls SET status = 'interrupted'
     WHERE status = 'started' AND host_id IN (SELECT id FROM expired)
     RETURNING ${CALL_COLUMNS}, replay`,
  ),
  interruptCallsOf: statement('interrupt_calls_of', `UPDATE calls SET status = 'interrupted' WHERE host_id = $1 AND status = 'started' RETURNING ${CALL_COLUMNS}, replay`),
  endHost: statement('end_host', `UPDATE hosts SET ended_at = $2, end_reason = 'closed' WHERE id = $1 AND ended_at IS NULL`),
  insertCall: statement(
    'insert_call',
    `INSERT INTO calls (${INSERT_CALL_COLUMNS}) VALUES (${Array.from({ length: INSERT_CALL_ARITY }, (_, column) => `$${column + 1}`).join(', ')})`,
  ),
  // Takes the key for $3, unless a call that still holds it claimed it first:
  // a failed, refused, cancelled or rerun-reconciled holder lets it go.
  claimKey: statement(
    'claim_key',
    `INSERT INTO idempotency_claims AS claim (tool, idempotency_key, call_id) VALUES ($1, $2, $3)
     ON CONFLICT (tool, idempotency_key) DO UPDATE SET call_id = excluded.call_id
     WHERE EXISTS (
       SELECT 1 FROM calls holder WHERE holder.id = claim.call_id
         AND (holder.status IN ('failed', 'rejected', 'denied', 'cancelled')
           OR (holder.status = 'interrupted' AND holder.reconciliation = 'rerun')))
     RETURNING call_id`,
  ),
  finishCall: statement(
    'finish_call',
    `UPDATE calls SET status = $2, error_code = $3, result_hash = $4, result_bytes = $5, replay = $6, ended_at = $7,
       egress_admitted = $8, egress_refused = $9
     WHERE id = $1 AND status = 'started'
     RETURNING ${CALL_COLUMNS}, replay`,
  ),
  getCall: statement('get_call', `SELECT ${CALL_COLUMNS} FROM calls WHERE id = $1`),
  getCallForUpdate: statement('get_call_for_update', `SELECT ${CALL_COLUMNS} FROM calls WHERE id = $1 FOR UPDATE`),
  findByKey: statement(
    'find_by_key',
    `SELECT id, status, args_hash, replay, reconciliation FROM calls
     WHERE tool = $1 AND idempotency_key = $2
       AND (status IN ('started', 'completed')
         OR (status = 'interrupted' AND reconciliation IS NULL)
         OR (status = 'skipped' AND reconciliation = 'skip'))
     ORDER BY CASE status WHEN 'started' THEN 0 WHEN 'interrupted' THEN 1 WHEN 'completed' THEN 2 ELSE 3 END, seq DESC
     LIMIT 1`,
  ),
  reconcile: statement('reconcile', `UPDATE calls SET status = $2, reconciliation = $3, reconciled_at = $4 WHERE id = $1 RETURNING ${CALL_COLUMNS}, replay`),
  insertChain: statement('insert_chain', `INSERT INTO chains (id, role, opened_at) VALUES ($1, $2, $3)`),
  closeChain: statement('close_chain', `UPDATE chains SET closed_at = $2 WHERE id = $1`),
  putArtifact: statement(
    'put_artifact',
    `INSERT INTO artifacts (sha256, mime_type, size_bytes, bytes, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (sha256) DO UPDATE SET expires_at = GREATEST(artifacts.expires_at, excluded.expires_at)`,
  ),
  getArtifact: statement('get_artifact', `SELECT mime_type, expires_at, bytes FROM artifacts WHERE sha256 = $1`),
  sweepArtifacts: statement('sweep_artifacts', `DELETE FROM artifacts WHERE expires_at <= $1`),
  insertApproval: statement(
    'insert_approval',
    `INSERT INTO approvals (id, tool, args_hash, side_effect, rule, principal, session_id, call_id, created_at, expires_at, state, definition_digest, arguments, effects, host_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $12, $13, $14)`,
  ),
  getApproval: statement('get_approval', `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1`),
  listApprovals: statement('list_approvals', `SELECT ${APPROVAL_COLUMNS} FROM approvals ORDER BY created_at DESC, id`),
  listPendingApprovals: statement('list_pending_approvals', `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE state = 'pending' AND expires_at > $1 ORDER BY created_at DESC, id`),
  decideApproval: statement(
    'decide_approval',
    `UPDATE approvals SET state = $2, decided_by = $3, decided_at = $4, note = $5, decided_via = $6 WHERE id = $1 AND state = 'pending' AND expires_at > $4`,
  ),
  spendApproval: statement(
    'spend_approval',
    `UPDATE approvals SET state = 'spent', spent_by = $4, spent_at = $5
     WHERE id = $1 AND state = 'approved' AND tool = $2 AND args_hash = $3 AND definition_digest IS NOT DISTINCT FROM $6 AND expires_at > $5`,
  ),
} as const;
