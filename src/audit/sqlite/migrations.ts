// Versioned schema of the journal. PRAGMA user_version holds the number of
// migrations applied; each migration runs once, in its own IMMEDIATE
// transaction, so two hosts starting together apply it exactly once. A journal
// from a newer toolhost is refused, never downgraded.
import type { Database } from 'better-sqlite3';
import { JournalError } from '../journal-error.js';
import { RATE_WINDOWS_TABLE } from '../rate-windows-schema.js';
import { LIST_CHECKS, rewriteListChecks } from './list-checks.js';

/** Marks the file as a toolhost journal (PRAGMA application_id; "THJ1"). */
export const APPLICATION_ID = 0x54484a31;

/** A migration: SQL run as it is, or a step that needs the connection itself. */
type Migration = string | ((db: Database) => void);

/** Migration N (1-based) brings the schema from version N-1 to N. Append only; never edit a shipped one. */
export const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE hosts (
    id            TEXT PRIMARY KEY,
    pid           INTEGER NOT NULL,
    machine       TEXT NOT NULL,
    boot_id       TEXT,
    process_start TEXT,
    session_id    TEXT,
    started_at    INTEGER NOT NULL,
    ended_at      INTEGER,
    end_reason    TEXT CHECK (end_reason IN ('closed', 'dead'))
  );
  CREATE INDEX hosts_running ON hosts(id) WHERE ended_at IS NULL;

  CREATE TABLE calls (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    host_id         TEXT NOT NULL REFERENCES hosts(id),
    session_id      TEXT NOT NULL,
    tool            TEXT NOT NULL,
    args_hash       TEXT NOT NULL,
    side_effect     TEXT,
    decision        TEXT NOT NULL CHECK (decision IN ('allow', 'deny', 'ask', 'would_deny')),
    rule            TEXT,
    approval        TEXT CHECK (approval IN ('not_needed', 'approved', 'denied', 'required')),
    idempotency_key TEXT,
    status          TEXT NOT NULL CHECK (status IN ('started', 'completed', 'failed', 'interrupted', 'rejected', 'denied', 'cancelled', 'skipped')),
    error_code      TEXT,
    result_hash     TEXT,
    result_bytes    INTEGER,
    replay          TEXT,
    started_at      INTEGER NOT NULL,
    ended_at        INTEGER,
    reconciliation  TEXT CHECK (reconciliation IN ('rerun', 'skip')),
    reconciled_at   INTEGER
  );
  CREATE INDEX calls_by_time ON calls(started_at);
  CREATE INDEX calls_by_tool ON calls(tool, started_at);
  CREATE INDEX calls_by_status ON calls(status, started_at);
  CREATE INDEX calls_by_key ON calls(tool, idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX calls_running ON calls(host_id) WHERE status = 'started';

  CREATE TABLE artifacts (
    sha256     TEXT PRIMARY KEY CHECK (length(sha256) = 64),
    mime_type  TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX artifacts_by_expiry ON artifacts(expires_at);
  `,
  // 2: pending approvals by an operator (SPEC section 7.2).
  `
  CREATE TABLE approvals (
    id          TEXT PRIMARY KEY,
    tool        TEXT NOT NULL,
    args_hash   TEXT NOT NULL,
    side_effect TEXT,
    rule        TEXT,
    principal   TEXT,
    session_id  TEXT NOT NULL,
    call_id     TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'spent')),
    decided_by  TEXT,
    decided_at  INTEGER,
    spent_by    TEXT,
    spent_at    INTEGER
  );
  CREATE INDEX approvals_by_state ON approvals(state, created_at);
  `,
  // 3: network attempts of the call (egress proxy and ctx.fetch), admitted and refused; NULL before.
  `
  ALTER TABLE calls ADD COLUMN egress_admitted INTEGER;
  ALTER TABLE calls ADD COLUMN egress_refused INTEGER;
  `,
  // 4: who made the call (SPEC section 6.1): the authenticated principal over HTTP, NULL on stdio.
  `
  ALTER TABLE calls ADD COLUMN principal TEXT;
  CREATE INDEX calls_by_principal ON calls(principal, started_at) WHERE principal IS NOT NULL;
  `,
  // 5: approvals bind to the tool's definition digest (SPEC section 4.2); rate windows (SPEC section 4.1).
  `
  ALTER TABLE approvals ADD COLUMN definition_digest TEXT;
  ${RATE_WINDOWS_TABLE}
  `,
  // 6: approvals a person can judge (SPEC section 7.2): the arguments (redacted, bounded) and the
  // projected effect as JSON, the host that asked, and the operator's note and where they decided.
  `
  ALTER TABLE approvals ADD COLUMN arguments TEXT;
  ALTER TABLE approvals ADD COLUMN effects TEXT;
  ALTER TABLE approvals ADD COLUMN host_id TEXT;
  ALTER TABLE approvals ADD COLUMN note TEXT;
  ALTER TABLE approvals ADD COLUMN decided_via TEXT;
  `,
  // 7: the chained journal (SPEC section 7.3) and what an auditor reads in a record (section 7.1).
  `
  ALTER TABLE calls ADD COLUMN policy_digest TEXT;
  ALTER TABLE calls ADD COLUMN definition_digest TEXT;
  ALTER TABLE calls ADD COLUMN approved_by TEXT CHECK (approved_by IN ('client', 'operator'));
  ALTER TABLE calls ADD COLUMN approver_name TEXT;
  ALTER TABLE calls ADD COLUMN arguments TEXT;
  CREATE INDEX calls_by_decision ON calls(decision, started_at);

  -- Every fact of every chain, append only (src/audit/chain/chain-entry.ts).
  CREATE TABLE chain_entries (
    chain_id TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    prev     TEXT,
    hash     TEXT NOT NULL,
    kind     TEXT NOT NULL,
    ref      TEXT NOT NULL,
    rev      INTEGER NOT NULL,
    at       INTEGER NOT NULL,
    record   TEXT NOT NULL,
    PRIMARY KEY (chain_id, seq)
  );

  -- One row per chain: closed_at is set with its final checkpoint.
  CREATE TABLE chains (
    id        TEXT PRIMARY KEY,
    role      TEXT NOT NULL,
    opened_at INTEGER NOT NULL,
    closed_at INTEGER
  );

  -- Records older than this were written before the journal was chained.
  CREATE TABLE chain_meta (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    chained_since INTEGER NOT NULL
  );
  INSERT INTO chain_meta (id, chained_since) VALUES (1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
  `,
  // 8: the status and decision indexes leave out the usual value (completed, allow): every index
  // a record enters is one more page its commit writes, and a search for that value reads most
  // of the table anyway (by time). A search for another value names the index's condition
  // (call-query-sql.ts), so SQLite uses it.
  `
  DROP INDEX calls_by_status;
  CREATE INDEX calls_by_status ON calls(status, started_at) WHERE status <> 'completed';
  DROP INDEX calls_by_decision;
  CREATE INDEX calls_by_decision ON calls(decision, started_at) WHERE decision <> 'allow';
  `,
  // 9: the same CHECKs, written as comparisons (list-checks.ts): a list of more than two values
  // made every INSERT and UPDATE of a call or an approval build and free a temporary b-tree per list.
  (db) => rewriteListChecks(db, LIST_CHECKS),
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Reads the schema version and the application id; refuses a newer or foreign database. */
export function checkSchema(db: Database, file: string): number {
  const version = Number(db.pragma('user_version', { simple: true }));
  const applicationId = Number(db.pragma('application_id', { simple: true }));
  if (version > SCHEMA_VERSION) {
    throw new JournalError(
      'journal_newer_schema',
      `The journal ${file} has schema version ${version}, newer than this toolhost understands (${SCHEMA_VERSION}). Upgrade toolhost; the journal was left untouched.`,
      { file, version, supported: SCHEMA_VERSION },
    );
  }
  const tableCount = Number(db.prepare(`SELECT count(*) FROM sqlite_schema WHERE type = 'table'`).pluck().get());
  if (applicationId !== APPLICATION_ID && (applicationId !== 0 || tableCount > 0 || version > 0)) {
    throw new JournalError(
      'journal_foreign',
      `The file ${file} is an SQLite database but not a toolhost journal. Move it away or choose another --state folder; it was left untouched.`,
      { file, applicationId },
    );
  }
  return version;
}

/** Applies every pending migration; safe when several processes start at once. */
export function migrate(db: Database): void {
  for (;;) {
    const applied = db
      .transaction(() => {
        const version = Number(db.pragma('user_version', { simple: true }));
        const next = MIGRATIONS[version];
        if (next === undefined) return false;
        if (typeof next === 'string') db.exec(next);
        else next(db);
        db.pragma(`application_id = ${APPLICATION_ID}`);
        db.pragma(`user_version = ${version + 1}`);
        return true;
      })
      .immediate();
    if (!applied) return;
  }
}
