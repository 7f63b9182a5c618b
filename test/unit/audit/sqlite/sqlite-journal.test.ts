import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// What only the SQLite store has: a file with modes, WAL, damage and foreign
// files, and dead hosts found by pid and boot. The behaviour both stores share
// is in ../journal.test.ts.
import { JournalError } from '../../../../src/audit/journal-error.js';
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from '../../../../src/audit/sqlite/migrations.js';
import { callQuerySql } from '../../../../src/audit/sqlite/call-query-sql.js';
import { SqliteJournal as Journal } from '../../../../src/audit/sqlite/sqlite-journal.js';
import { INSERT_CALL_SQL } from '../../../../src/audit/sqlite/journal-statements.js';
import { CALL_ROW_ARITY } from '../../../../src/audit/call-row.js';
import { journalPathOf } from '../../../../src/audit/state-dir.js';
import { callFinish, callStart, makeTempParent } from '../../../helpers/journal-fixtures.js';

let temp: ReturnType<typeof makeTempParent>;
const open: Journal[] = [];

function openJournal(options?: Parameters<typeof Journal.open>[1]): Journal {
  const journal = Journal.open(temp.stateDir, options);
  open.push(journal);
  return journal;
}

/** A journal file at schema version `version`, as the toolhost that wrote it left it. */
function journalAtVersion(version: number): Database.Database {
  mkdirSync(temp.stateDir, { recursive: true, mode: 0o700 });
  const db = new Database(journalPathOf(temp.stateDir));
  for (const migration of MIGRATIONS.slice(0, version)) {
    if (typeof migration === 'string') db.exec(migration);
    else migration(db);
  }
  db.pragma(`application_id = ${APPLICATION_ID}`);
  db.pragma(`user_version = ${version}`);
  return db;
}

function catchJournalError(action: () => unknown): JournalError {
  try {
    action();
  } catch (error) {
    if (error instanceof JournalError) return error;
    throw error;
  }
  throw new Error('expected a JournalError');
}

beforeEach(() => {
  temp = makeTempParent();
});

afterEach(() => {
  for (const journal of open.splice(0)) journal.close();
  temp.remove();
});

describe('Journal.open', () => {
  it('creates a private state folder and database at the current schema version, in WAL mode', () => {
    openJournal();
    expect(statSync(temp.stateDir).mode & 0o777).toBe(0o700);
    expect(statSync(journalPathOf(temp.stateDir)).mode & 0o777).toBe(0o600);
    const db = new Database(journalPathOf(temp.stateDir), { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('refuses a state folder others can write to', () => {
    mkdirSync(temp.stateDir, { mode: 0o700 });
    chmodSync(temp.stateDir, 0o777);
    const error = catchJournalError(() => openJournal());
    expect(error.code).toBe('state_dir_insecure');
    expect(error.details).toMatchObject({ stateDir: temp.stateDir, mode: '777' });
  });

  it('refuses a garbage file as damaged and leaves its bytes untouched', () => {
    mkdirSync(temp.stateDir, { mode: 0o700 });
    const file = journalPathOf(temp.stateDir);
    const garbage = Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919 + 13) % 256));
    writeFileSync(file, garbage);
    const error = catchJournalError(() => openJournal());
    expect(error.code).toBe('journal_corrupt');
    expect(error.details).toMatchObject({ file, sqlite: 'SQLITE_NOTADB' });
    expect(readFileSync(file).equals(garbage)).toBe(true);
  });

  it('refuses a journal written by a newer schema and leaves it untouched', () => {
    openJournal().close();
    const file = journalPathOf(temp.stateDir);
    const db = new Database(file);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const before = readFileSync(file);
    const error = catchJournalError(() => openJournal());
    expect(error.code).toBe('journal_newer_schema');
    expect(error.details).toMatchObject({ version: SCHEMA_VERSION + 1, supported: SCHEMA_VERSION });
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('refuses an SQLite database that is not a toolhost journal', () => {
    mkdirSync(temp.stateDir, { mode: 0o700 });
    const db = new Database(journalPathOf(temp.stateDir));
    db.exec('CREATE TABLE notes (body TEXT)');
    db.close();
    expect(catchJournalError(() => openJournal()).code).toBe('journal_foreign');
  });

  it('refuses a journal path that is not a regular file', () => {
    mkdirSync(journalPathOf(temp.stateDir), { recursive: true, mode: 0o700 });
    const error = catchJournalError(() => openJournal());
    expect(error.code).toBe('journal_unreadable');
    expect(error.details).toEqual({ file: journalPathOf(temp.stateDir) });
  });

  it('migrates a version-1 journal: its calls stay, with no principal and no egress counts', () => {
    const db = journalAtVersion(1);
    db.prepare(`INSERT INTO hosts (id, pid, machine, started_at, ended_at, end_reason) VALUES ('old', 1, 'm', 1, 2, 'closed')`).run();
    db.prepare(
      `INSERT INTO calls (id, host_id, session_id, tool, args_hash, decision, status, started_at) VALUES ('old-call', 'old', 's', 't', 'h', 'allow', 'completed', 1)`,
    ).run();
    db.close();
    const journal = openJournal();
    expect(journal.get('old-call')).toMatchObject({ tool: 't', principal: null, egressAdmitted: null, egressRefused: null });
    const migrated = new Database(journalPathOf(temp.stateDir), { readonly: true });
    expect(migrated.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    migrated.close();
  });

  it('reopens an existing journal without migrating it again', () => {
    const first = openJournal();
    const start = callStart();
    first.record(start, callFinish());
    first.close();
    expect(openJournal().get(start.id)?.status).toBe('completed');
  });

  // better-sqlite3 builds SQLite with a 16 MB cache per connection; the host's connection commits
  // every lone call's record and kept each page it wrote, ~2 KB a call, until it held 16 MB.
  it("keeps SQLite's own page cache, 2000 KiB, on a journal's connection", () => {
    expect(openJournal().database.pragma('cache_size', { simple: true })).toBe(-2000);
  });
});

describe('the status and decision indexes', () => {
  // Each index a record enters is one more page its commit writes: the usual status and decision enter none.
  it('hold only the unusual values, and a search for one of those uses its index', () => {
    const journal = openJournal();
    const usual = Array.from({ length: 6 }, () => callStart({ sideEffect: 'read_only' }));
    for (const start of usual) journal.record(start, callFinish());
    const failed = callStart({ sideEffect: 'read_only' });
    journal.record(failed, callFinish({ status: 'failed', errorCode: 'tool_error' }));
    const denied = callStart({ decision: 'deny' });
    journal.record(denied, callFinish({ status: 'denied', errorCode: 'policy_denied' }));
    const db = journal.database;
    const entries = (index: string) => db.prepare(`SELECT sum(ncell) FROM dbstat WHERE name = ? AND pagetype = 'leaf'`).pluck().get(index);
    expect(entries('calls_by_status')).toBe(2);
    expect(entries('calls_by_decision')).toBe(1);
    expect(entries('calls_by_time')).toBe(8);
    const plan = (filter: Parameters<typeof callQuerySql>[0]) => {
      const { sql, values } = callQuerySql(filter);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(values) as { detail: string }[]).map((row) => row.detail).join('; ');
    };
    expect(plan({ status: 'failed' })).toContain('USING INDEX calls_by_status (status=?)');
    expect(plan({ decision: 'deny', since: 0 })).toContain('USING INDEX calls_by_decision (decision=? AND started_at>?)');
    // The usual value is most of the table: it is read by time.
    expect(plan({ status: 'completed' })).toContain('USING INDEX calls_by_time');
    expect(journal.query({ status: 'failed' }).map((record) => record.id)).toEqual([failed.id]);
    expect(journal.query({ decision: 'deny' }).map((record) => record.id)).toEqual([denied.id]);
    expect(
      journal
        .query({ status: 'completed' })
        .map((record) => record.id)
        .sort(),
    ).toEqual(usual.map((start) => start.id).sort());
    expect(journal.query({ decision: 'allow' })).toHaveLength(7);
  });

  it('a version-7 journal keeps its records and finds them by status and decision after the migration', () => {
    const db = journalAtVersion(7);
    db.prepare(`INSERT INTO hosts (id, pid, machine, started_at, ended_at, end_reason) VALUES ('old', 1, 'm', 1, 2, 'closed')`).run();
    const insert = db.prepare(`INSERT INTO calls (id, host_id, session_id, tool, args_hash, decision, status, started_at) VALUES (?, 'old', 's', 't', 'h', ?, ?, ?)`);
    insert.run('ok', 'allow', 'completed', 1);
    insert.run('refused', 'deny', 'denied', 2);
    db.close();
    const journal = openJournal();
    expect(journal.query({ status: 'denied' }).map((record) => record.id)).toEqual(['refused']);
    expect(journal.query({ decision: 'deny' }).map((record) => record.id)).toEqual(['refused']);
    expect(journal.query({ status: 'completed' }).map((record) => record.id)).toEqual(['ok']);
    const entries = journal.database.prepare(`SELECT sum(ncell) FROM dbstat WHERE name = 'calls_by_status' AND pagetype = 'leaf'`).pluck().get();
    expect(entries).toBe(1);
  });
});

describe('the CHECKs on lists of values', () => {
  const ephemeralTables = (db: Database.Database, sql: string, arity: number) =>
    (db.prepare(`EXPLAIN ${sql}`).all(new Array(arity).fill(null)) as { opcode: string }[]).filter((op) => op.opcode === 'OpenEphemeral').length;

  // A CHECK of `x IN (a, b, c)` made SQLite build a temporary b-tree of the list each time a row was written.
  it('a version-8 journal keeps its rows and its rules, and writing a call or an approval builds no temporary table', () => {
    const db = journalAtVersion(8);
    db.prepare(`INSERT INTO hosts (id, pid, machine, started_at, ended_at, end_reason) VALUES ('old', 1, 'm', 1, 2, 'closed')`).run();
    db.prepare(
      `INSERT INTO calls (id, host_id, session_id, tool, args_hash, decision, approval, status, started_at) VALUES ('old-call', 'old', 's', 't', 'h', 'ask', 'approved', 'completed', 1)`,
    ).run();
    expect(ephemeralTables(db, INSERT_CALL_SQL, CALL_ROW_ARITY)).toBe(3);
    db.close();
    const journal = openJournal();
    const migrated = journal.database;
    expect(migrated.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(journal.get('old-call')).toMatchObject({ decision: 'ask', approval: 'approved', status: 'completed' });
    expect(ephemeralTables(migrated, INSERT_CALL_SQL, CALL_ROW_ARITY)).toBe(0);
    expect(ephemeralTables(migrated, `UPDATE approvals SET state = ? WHERE id = ?`, 2)).toBe(0);
    const write = (column: string, value: string) =>
      catchSqliteCode(
        () =>
          migrated
            .prepare(`INSERT INTO calls (id, host_id, session_id, tool, args_hash, decision, status, started_at) VALUES (?, 'old', 's', 't', 'h', 'allow', 'completed', 1)`)
            .run(`${column}-${value}`) && migrated.prepare(`UPDATE calls SET ${column} = ? WHERE id = ?`).run(value, `${column}-${value}`),
      );
    for (const column of ['decision', 'approval', 'status']) expect(write(column, 'bogus')).toBe('SQLITE_CONSTRAINT_CHECK');
    expect(write('status', 'skipped')).toBeUndefined();
    expect(write('approval', 'required')).toBeUndefined();
    expect(
      catchSqliteCode(() =>
        migrated.prepare(`INSERT INTO approvals (id, tool, args_hash, session_id, call_id, created_at, expires_at, state) VALUES ('a', 't', 'h', 's', 'c', 1, 2, 'later')`).run(),
      ),
    ).toBe('SQLITE_CONSTRAINT_CHECK');
    expect(migrated.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});

function catchSqliteCode(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe('dead hosts', () => {
  it('leaves the started calls of a live host alone', () => {
    const first = openJournal();
    const start = callStart();
    first.begin(start);
    const second = openJournal();
    expect(second.get(start.id)?.status).toBe('started');
    first.finish(start.id, callFinish());
    expect(second.get(start.id)?.status).toBe('completed');
  });

  it('marks interrupted the calls of a host whose pid was reused by another process', () => {
    const first = openJournal();
    const start = callStart();
    first.begin(start);
    // Same pid, different kernel start time: the pid now belongs to another process.
    const db = new Database(journalPathOf(temp.stateDir));
    db.prepare(`UPDATE hosts SET process_start = '1' WHERE id = ?`).run(first.hostId);
    db.close();
    const second = openJournal();
    expect(second.get(start.id)).toMatchObject({ status: 'interrupted', reconciliation: null, endedAt: null });
  });

  it('marks interrupted the calls of a host from an earlier boot', () => {
    const first = openJournal();
    const start = callStart();
    first.begin(start);
    const db = new Database(journalPathOf(temp.stateDir));
    db.prepare(`UPDATE hosts SET boot_id = 'an-earlier-boot' WHERE id = ?`).run(first.hostId);
    db.close();
    expect(openJournal().get(start.id)?.status).toBe('interrupted');
  });

  it('leaves alone the calls of a host on another machine', () => {
    const first = openJournal();
    const start = callStart();
    first.begin(start);
    const db = new Database(journalPathOf(temp.stateDir));
    db.prepare(`UPDATE hosts SET machine = 'elsewhere', process_start = '1' WHERE id = ?`).run(first.hostId);
    db.close();
    expect(openJournal().get(start.id)?.status).toBe('started');
  });
});
