// Pending operator approvals in the SQLite journal (SPEC section 7.2). A spend
// is one conditional UPDATE, so two hosts on one folder cannot both spend one
// approval; a decision likewise only moves a pending, unexpired row. Each
// change is a chained fact of the journal that made it (SPEC section 7.3).
import {
  APPROVAL_COLUMNS,
  approvalJsonColumns,
  decideRefusal,
  spendRefusalOf,
  toApprovalRecord,
  type ApprovalDecision,
  type DecisionExtras,
  type ApprovalRecord,
  type ApprovalRow,
  type NewApproval,
  type SpendOutcome,
} from '../approval-record.js';
import { APPROVAL_REV, approvalFact } from '../chain/chain-records.js';
import type { SqliteJournal } from './sqlite-journal.js';

/** The approvals table of one SQLite journal. */
export class SqliteApprovals {
  constructor(private readonly journal: () => SqliteJournal) {}

  create(approval: NewApproval, hostId: string | null): ApprovalRecord {
    const journal = this.journal();
    const a = approval;
    return journal.writeChained(1, () => {
      journal.database
        .prepare(
          `INSERT INTO approvals (id, tool, args_hash, side_effect, rule, principal, session_id, call_id, created_at, expires_at, state, definition_digest, arguments, effects, host_id)
           VALUES (@id, @tool, @argsHash, @sideEffect, @rule, @principal, @sessionId, @callId, @createdAt, @expiresAt, 'pending', @definitionDigest, @arguments, @effects, @hostId)`,
        )
        .run({
          id: a.id,
          tool: a.tool,
          argsHash: a.argsHash,
          sideEffect: a.sideEffect,
          rule: a.rule,
          principal: a.principal,
          sessionId: a.sessionId,
          callId: a.callId,
          createdAt: a.createdAt,
          expiresAt: a.expiresAt,
          definitionDigest: a.definitionDigest ?? null,
          ...approvalJsonColumns(a),
          hostId,
        });
      const record = this.get(approval.id) as ApprovalRecord;
      return { value: record, facts: [approvalFact(record, APPROVAL_REV.created)] };
    });
  }

  get(id: string): ApprovalRecord | undefined {
    const row = this.journal().database.prepare(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = ?`).get(id) as ApprovalRow | undefined;
    return row === undefined ? undefined : toApprovalRecord(row);
  }

  list(pendingOnly: boolean, now = Date.now()): ApprovalRecord[] {
    const where = pendingOnly ? `WHERE state = 'pending' AND expires_at > @now` : '';
    const rows = this.journal().database.prepare(`SELECT ${APPROVAL_COLUMNS} FROM approvals ${where} ORDER BY created_at DESC, id`).all({ now }) as ApprovalRow[];
    return rows.map(toApprovalRecord);
  }

  decide(id: string, decision: ApprovalDecision, by: string, extras: DecisionExtras = {}, now = Date.now()): ApprovalRecord {
    const journal = this.journal();
    return journal.writeChained(1, () => {
      const changes = journal.database
        .prepare(
          `UPDATE approvals SET state = @decision, decided_by = @by, decided_at = @now, note = @note, decided_via = @via
           WHERE id = @id AND state = 'pending' AND expires_at > @now`,
        )
        .run({ id, decision, by, now, note: extras.note ?? null, via: extras.via ?? 'cli' }).changes;
      const record = this.get(id);
      if (changes !== 1) throw decideRefusal(id, record, now);
      return { value: record as ApprovalRecord, facts: [approvalFact(record as ApprovalRecord, APPROVAL_REV.decided)] };
    });
  }

  spend(id: string, tool: string, argsHash: string, callId: string, definitionDigest?: string, now = Date.now()): SpendOutcome {
    const journal = this.journal();
    return journal.writeChained(1, (): { value: SpendOutcome; facts: ReturnType<typeof approvalFact>[] } => {
      const changes = journal.database
        .prepare(
          `UPDATE approvals SET state = 'spent', spent_by = @callId, spent_at = @now
           WHERE id = @id AND state = 'approved' AND tool = @tool AND args_hash = @argsHash AND definition_digest IS @digest AND expires_at > @now`,
        )
        .run({ id, tool, argsHash, callId, now, digest: definitionDigest ?? null }).changes;
      const record = this.get(id);
      if (changes === 1) return { value: { ok: true, approval: record as ApprovalRecord }, facts: [approvalFact(record as ApprovalRecord, APPROVAL_REV.spent)] };
      return { value: { ok: false, reason: spendRefusalOf(record, tool, argsHash, now, definitionDigest), ...(record ? { approval: record } : {}) }, facts: [] };
    });
  }
}
