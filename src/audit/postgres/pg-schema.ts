// Versioned schema of the PostgreSQL journal (SPEC section 7.1). One row in
// toolhost_meta names the application and the version; every pending
// migration runs in one transaction under a transaction-scoped advisory lock,
// so hosts starting together migrate once and the others wait, then see the
// result. A database that holds other tables but no toolhost_meta, or a newer
// version, is refused before anything is written (the transaction rolls back).
import type { PoolClient } from 'pg';
import { JournalError } from '../journal-error.js';
import { RATE_WINDOWS_TABLE } from '../rate-windows-schema.js';

/** Marks a database as a toolhost journal. */
const APPLICATION = 'toolhost-journal';

/** The advisory lock key migrations hold ("THJ1" as an integer). */
const MIGRATION_LOCK_KEY = 0x54484a31;

/** Migration N (1-based) brings the schema from version N-1 to N. Append only; never edit a shipped one. */
const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE toolhost_meta (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    application TEXT NOT NULL,
    version     INTEGER NOT NULL
  );

  CREATE TABLE hosts (
    id               TEXT PRIMARY KEY,
    pid              INTEGER NOT NULL,
    machine          TEXT NOT NULL,
    session_id       TEXT,
    started_at       BIGINT NOT NULL,
    lease_expires_at TIMESTAMPTZ NOT NULL,
    ended_at         BIGINT,
    end_reason       TEXT CHECK (end_reason IN ('closed', 'expired'))
  );
  CREATE INDEX hosts_running ON hosts(lease_expires_at) WHERE ended_at IS NULL;

  CREATE TABLE calls (
    seq             BIGSERIAL PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    host_id         TEXT NOT NULL REFERENCES hosts(id),
    session_id      TEXT NOT NULL,
    -- who made the call (SPEC section 6.1): the authenticated principal over HTTP, NULL on stdio
    principal       TEXT,
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
    result_bytes    BIGINT,
    replay          TEXT,
    started_at      BIGINT NOT NULL,
    ended_at        BIGINT,
    reconciliation  TEXT CHECK (reconciliation IN ('rerun', 'skip')),
    reconciled_at   BIGINT,
    egress_admitted INTEGER,
    egress_refused  INTEGER
  );
  CREATE INDEX calls_by_time ON calls(started_at);
  CREATE INDEX calls_by_tool ON calls(tool, started_at);
  CREATE INDEX calls_by_status ON calls(status, started_at);
  CREATE INDEX calls_by_key ON calls(tool, idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX calls_running ON calls(host_id) WHERE status = 'started';
  CREATE INDEX calls_by_principal ON calls(principal, started_at) WHERE principal IS NOT NULL;

  -- One row per (tool, key) that a write-ahead record ever claimed: the unique
  -- constraint makes two hosts racing one key collide in the database; the
  -- claiming call's status says whether the key is still held.
  CREATE TABLE idempotency_claims (
    tool            TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    call_id         TEXT NOT NULL REFERENCES calls(id),
    PRIMARY KEY (tool, idempotency_key)
  );

  CREATE TABLE artifacts (
    sha256     TEXT PRIMARY KEY CHECK (length(sha256) = 64),
    mime_type  TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    bytes      BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  );
  CREATE INDEX artifacts_by_expiry ON artifacts(expires_at);

  CREATE TABLE approvals (
    id          TEXT PRIMARY KEY,
    tool        TEXT NOT NULL,
    args_hash   TEXT NOT NULL,
    side_effect TEXT,
    rule        TEXT,
    principal   TEXT,
    session_id  TEXT NOT NULL,
    call_id     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'spent')),
    decided_by  TEXT,
    decided_at  BIGINT,
    spent_by    TEXT,
    spent_at    BIGINT
  );
  CREATE INDEX approvals_by_state ON approvals(state, created_at);

  INSERT INTO toolhost_meta (id, application, version) VALUES (1, '${APPLICATION}', 0);
  `,
  // 2: approvals bind to the tool's definition digest (SPEC section 4.2); rate windows (SPEC section 4.1).
  `
  ALTER TABLE approvals ADD COLUMN definition_digest TEXT;
  ${RATE_WINDOWS_TABLE}
  `,
  // 3: approvals a person can judge (SPEC section 7.2): the arguments (redacted, bounded) and the
  // projected effect as JSON, the host that asked, and the operator's note and where they decided.
  `
  ALTER TABLE approvals ADD COLUMN arguments TEXT;
  ALTER TABLE approvals ADD COLUMN effects TEXT;
  ALTER TABLE approvals ADD COLUMN host_id TEXT;
  ALTER TABLE approvals ADD COLUMN note TEXT;
  ALTER TABLE approvals ADD COLUMN decided_via TEXT;
  `,
  // 4: the chained journal (SPEC section 7.3) and what an auditor reads in a record (section 7.1).
  `
  ALTER TABLE calls
    ADD COLUMN policy_digest TEXT,
    ADD COLUMN definition_digest TEXT,
    ADD COLUMN approved_by TEXT CHECK (approved_by IN ('client', 'operator')),
    ADD COLUMN approver_name TEXT,
    ADD COLUMN arguments TEXT;
  CREATE INDEX calls_by_decision ON calls(decision, started_at);

  -- Every fact of every chain, append only (src/audit/chain/chain-entry.ts).
  CREATE TABLE chain_entries (
    chain_id TEXT NOT NULL,
    seq      BIGINT NOT NULL,
    prev     TEXT,
    hash     TEXT NOT NULL,
    kind     TEXT NOT NULL,
    ref      TEXT NOT NULL,
    rev      INTEGER NOT NULL,
    at       BIGINT NOT NULL,
    record   TEXT NOT NULL,
    PRIMARY KEY (chain_id, seq)
  );

  -- One row per chain: closed_at is set with its final checkpoint.
  CREATE TABLE chains (
    id        TEXT PRIMARY KEY,
    role      TEXT NOT NULL,
    opened_at BIGINT NOT NULL,
    closed_at BIGINT
  );

  -- Records older than this were written before the journal was chained.
  CREATE TABLE chain_meta (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    chained_since BIGINT NOT NULL
  );
  INSERT INTO chain_meta (id, chained_since) VALUES (1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  `,
];

/** The schema version this build writes. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** Checks and migrates the database on `client` in one transaction; refuses a foreign or newer one untouched. */
export async function migratePostgres(client: PoolClient, display: string): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    const version = await readVersion(client, display);
    for (let next = version; next < PG_SCHEMA_VERSION; next++) {
      await client.query(PG_MIGRATIONS[next] as string);
      await client.query('UPDATE toolhost_meta SET version = $1 WHERE id = 1', [next + 1]);
    }
    await client.query('COMMIT');
    return PG_SCHEMA_VERSION;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

async function readVersion(client: PoolClient, display: string): Promise<number> {
  const meta = await client.query<{ present: boolean }>(`SELECT to_regclass('toolhost_meta') IS NOT NULL AS present`);
  if (meta.rows[0]?.present !== true) {
    const tables = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`);
    if ((tables.rows[0]?.n ?? 0) > 0) throw foreign(display);
    return 0;
  }
  const row = await client.query<{ application: string; version: number }>(`SELECT application, version FROM toolhost_meta WHERE id = 1`);
  const found = row.rows[0];
  if (found === undefined || found.application !== APPLICATION) throw foreign(display);
  if (found.version > PG_SCHEMA_VERSION) {
    throw new JournalError(
      'journal_newer_schema',
      `The journal ${display} has schema version ${found.version}, newer than this toolhost understands (${PG_SCHEMA_VERSION}). Upgrade toolhost; the journal was left untouched.`,
      { location: display, version: found.version, supported: PG_SCHEMA_VERSION },
    );
  }
  return found.version;
}

function foreign(display: string): JournalError {
  return new JournalError(
    'journal_foreign',
    `The database ${display} holds tables that are not a toolhost journal. Give toolhost a database of its own (CREATE DATABASE toolhost); it was left untouched.`,
    { location: display },
  );
}
