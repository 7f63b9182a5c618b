// What `audit verify` reads of a SQLite journal (JournalSnapshot), in one read
// transaction, so the entries, the chains and the tables they account for are
// of one moment.
import type Database from 'better-sqlite3';
import { APPROVAL_COLUMNS, toApprovalRecord, type ApprovalRow } from '../approval-record.js';
import { CALL_COLUMNS, toCallRecord, type CallRow } from '../call-record.js';
import type { ChainEntry } from '../chain/chain-entry.js';
import { chainedCallOfRecord } from '../chain/chain-records.js';
import type { ChainRow, JournalSnapshot } from '../chain/journal-snapshot.js';

/** The journal `db`'s chains, entries, calls and approvals, read together. */
export function readJournalSnapshot(db: Database.Database): JournalSnapshot {
  return db.transaction(() => {
    const entries = db.prepare(`SELECT chain_id AS chain, seq, prev, hash, kind, ref, rev, at, record FROM chain_entries ORDER BY chain_id, seq`).all() as ChainEntry[];
    const chains = (
      db.prepare(`SELECT id, role, opened_at, closed_at FROM chains ORDER BY opened_at, id`).all() as {
        id: string;
        role: string;
        opened_at: number;
        closed_at: number | null;
      }[]
    ).map((row): ChainRow => ({ id: row.id, role: row.role, openedAt: row.opened_at, closedAt: row.closed_at }));
    const calls = (db.prepare(`SELECT ${CALL_COLUMNS}, replay FROM calls ORDER BY seq`).all() as (CallRow & { replay: string | null })[]).map((row) =>
      chainedCallOfRecord(toCallRecord(row), row.replay),
    );
    const approvals = (db.prepare(`SELECT ${APPROVAL_COLUMNS} FROM approvals ORDER BY created_at, id`).all() as ApprovalRow[]).map(toApprovalRecord);
    const since = db.prepare(`SELECT chained_since FROM chain_meta WHERE id = 1`).pluck().get() as number | undefined;
    return { entries, chains, calls, approvals, chainedSince: since ?? null };
  })();
}
