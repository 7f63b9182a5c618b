// The SQL of the SQLite journal (sqlite-journal.ts), prepared once per connection,
// and the INSERTs the batch writer thread (record-writer-thread.mjs) repeats for
// many rows in one statement.
import type Database from 'better-sqlite3';
import { CALL_COLUMNS } from '../call-record.js';
import { CALL_ROW_ARITY, CALL_ROW_COLUMNS } from '../call-row.js';
import type { MultiRowInsert } from './record-writer.js';

/** The INSERT of call records as head and one row's placeholders, its values rows of callRowValues (the batch writer thread puts many rows in one statement). */
export const INSERT_CALLS: MultiRowInsert = {
  head: `INSERT INTO calls (${CALL_ROW_COLUMNS}) VALUES `,
  row: `(${Array.from({ length: CALL_ROW_ARITY }, () => '?').join(', ')})`,
  arity: CALL_ROW_ARITY,
};

/** The one-row INSERT of a call record (the bench times it against the chained write). */
export const INSERT_CALL_SQL = INSERT_CALLS.head + INSERT_CALLS.row;

/** The INSERT of chain entries, as INSERT_CALLS; a row's values in the order of entryRowValues (chain-entry.ts). */
export const INSERT_ENTRIES: MultiRowInsert = {
  head: `INSERT INTO chain_entries (chain_id, seq, prev, hash, kind, ref, rev, at, record) VALUES `,
  row: `(?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  arity: 9,
};

const INSERT_ENTRY_SQL = INSERT_ENTRIES.head + INSERT_ENTRIES.row;

/** The journal's statements on `db`. */
export function prepareStatements(db: Database.Database) {
  const insertCall = db.prepare(INSERT_CALL_SQL);
  return {
    insertHost: db.prepare(
      `INSERT INTO hosts (id, pid, machine, boot_id, process_start, session_id, started_at)
       VALUES (@id, @pid, @machine, @bootId, @processStart, @sessionId, @now)`,
    ),
    runningHosts: db.prepare(`SELECT id, pid, machine, boot_id, process_start FROM hosts WHERE ended_at IS NULL`),
    // ended_at stays NULL: when an interrupted call stopped is unknown.
    interruptCallsOf: db.prepare(`UPDATE calls SET status = 'interrupted' WHERE host_id = @hostId AND status = 'started' RETURNING ${CALL_COLUMNS}, replay`),
    endHost: db.prepare(`UPDATE hosts SET ended_at = @now, end_reason = @reason WHERE id = @hostId AND ended_at IS NULL`),
    insertCall,
    finishCall: db.prepare(
      `UPDATE calls SET status = ?, error_code = ?, result_hash = ?, result_bytes = ?,
         replay = ?, ended_at = ?, egress_admitted = ?, egress_refused = ?
       WHERE id = ? AND status = 'started' RETURNING ${CALL_COLUMNS}, replay`,
    ),
    insertEntry: db.prepare(INSERT_ENTRY_SQL),
    insertChain: db.prepare(`INSERT INTO chains (id, role, opened_at) VALUES (?, ?, ?)`),
    closeChain: db.prepare(`UPDATE chains SET closed_at = ? WHERE id = ?`),
    getCall: db.prepare(`SELECT ${CALL_COLUMNS} FROM calls WHERE id = ?`),
    findByKey: db.prepare(
      `SELECT id, status, args_hash, replay, reconciliation FROM calls
       WHERE tool = @tool AND idempotency_key = @key
         AND (status IN ('started', 'completed')
           OR (status = 'interrupted' AND reconciliation IS NULL)
           OR (status = 'skipped' AND reconciliation = 'skip'))
       ORDER BY CASE status WHEN 'started' THEN 0 WHEN 'interrupted' THEN 1 WHEN 'completed' THEN 2 ELSE 3 END, seq DESC
       LIMIT 1`,
    ),
    reconcile: db.prepare(`UPDATE calls SET status = @status, reconciliation = @reconciliation, reconciled_at = @now WHERE id = @id RETURNING ${CALL_COLUMNS}, replay`),
  };
}
