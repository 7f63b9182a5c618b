import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal, JournalError } from '../../../src/audit/journal.js';
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from '../../../src/audit/migrations.js';
import { journalPathOf } from '../../../src/audit/state-dir.js';
import { callFinish, callStart, makeTempParent } from './journal-fixtures.js';

let temp: ReturnType<typeof makeTempParent>;
const open: Journal[] = [];

function openJournal(options?: Parameters<typeof Journal.open>[1]): Journal {
  const journal = Journal.open(temp.stateDir, options);
  open.push(journal);
  return journal;
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

  it('reopens an existing journal without migrating it again', () => {
    const first = openJournal();
    const start = callStart();
    first.record(start, callFinish());
    first.close();
    expect(openJournal().get(start.id)?.status).toBe('completed');
  });
});

describe('recording calls', () => {
  it('keeps the principal of an HTTP call, and null for stdio', () => {
    const journal = openJournal();
    const overHttp = callStart({ principal: 'ci-bot' });
    const overStdio = callStart();
    journal.record(overHttp, callFinish());
    journal.record(overStdio, callFinish());
    expect(journal.get(overHttp.id)?.principal).toBe('ci-bot');
    expect(journal.get(overStdio.id)?.principal).toBeNull();
  });

  it('migrates a version-1 journal: its calls stay, with no principal', () => {
    mkdirSync(temp.stateDir, { recursive: true, mode: 0o700 });
    const db = new Database(journalPathOf(temp.stateDir));
    db.exec(MIGRATIONS[0]!);
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.pragma('user_version = 1');
    db.prepare(`INSERT INTO hosts (id, pid, machine, started_at, ended_at, end_reason) VALUES ('old', 1, 'm', 1, 2, 'closed')`).run();
    db.prepare(
      `INSERT INTO calls (id, host_id, session_id, tool, args_hash, decision, status, started_at) VALUES ('old-call', 'old', 's', 't', 'h', 'allow', 'completed', 1)`,
    ).run();
    db.close();
    const journal = openJournal();
    expect(journal.get('old-call')).toMatchObject({ tool: 't', principal: null });
  });

  it('begin writes a started record that finish completes', () => {
    const journal = openJournal({ sessionId: 'session-1' });
    const start = callStart({ idempotencyKey: 'k1' });
    journal.begin(start);
    expect(journal.get(start.id)).toMatchObject({ ...start, status: 'started', endedAt: null, hostId: journal.hostId });
    const finish = callFinish({ replay: '{"content":[]}' });
    journal.finish(start.id, finish);
    expect(journal.get(start.id)).toMatchObject({
      status: 'completed',
      errorCode: null,
      resultHash: finish.resultHash,
      resultBytes: finish.resultBytes,
      endedAt: finish.endedAt,
    });
  });

  it('record writes a call refused before it ran', () => {
    const journal = openJournal();
    const start = callStart({ decision: 'deny', rule: 'policies/org.yaml:12 sideEffects.deny' });
    journal.record(start, callFinish({ status: 'denied', errorCode: 'policy_denied', resultHash: null, resultBytes: null }));
    expect(journal.get(start.id)).toMatchObject({ status: 'denied', errorCode: 'policy_denied', rule: start.rule, decision: 'deny' });
  });

  it('refuses a second record with the same id', () => {
    const journal = openJournal();
    const start = callStart();
    journal.begin(start);
    expect(catchJournalError(() => journal.begin(start)).code).toBe('journal_write_failed');
  });

  it('refuses finish on an unknown id', () => {
    const journal = openJournal();
    const error = catchJournalError(() => journal.finish('nope', callFinish()));
    expect(error.code).toBe('unknown_call');
    expect(error.details).toEqual({ id: 'nope' });
  });

  it('a reader opened with asHost false records nothing', () => {
    openJournal().close();
    const reader = openJournal({ asHost: false });
    expect(reader.hostId).toBeNull();
    expect(catchJournalError(() => reader.begin(callStart())).code).toBe('journal_read_only');
  });

  it('close marks its own still-started calls interrupted and refuses later use', () => {
    const journal = Journal.open(temp.stateDir);
    const start = callStart();
    journal.begin(start);
    journal.close();
    journal.close();
    expect(catchJournalError(() => journal.get(start.id)).code).toBe('journal_closed');
    expect(openJournal().get(start.id)?.status).toBe('interrupted');
  });
});

describe('query', () => {
  it('filters by tool, status and since, newest first, with a limit', () => {
    const journal = openJournal();
    const t0 = Date.parse('2026-11-29T10:00:00Z');
    const a = callStart({ tool: 'fs.read', startedAt: t0 });
    const b = callStart({ tool: 'fs.write', startedAt: t0 + 1000 });
    const c = callStart({ tool: 'fs.write', startedAt: t0 + 2000 });
    journal.record(a, callFinish({ endedAt: t0 + 5 }));
    journal.record(b, callFinish({ status: 'failed', errorCode: 'timeout', endedAt: t0 + 1500 }));
    journal.begin(c);
    expect(journal.query().map((r) => r.id)).toEqual([c.id, b.id, a.id]);
    expect(journal.query({ tool: 'fs.write' }).map((r) => r.id)).toEqual([c.id, b.id]);
    expect(journal.query({ status: 'failed' }).map((r) => r.id)).toEqual([b.id]);
    expect(journal.query({ since: t0 + 1000 }).map((r) => r.id)).toEqual([c.id, b.id]);
    expect(journal.query({ limit: 1 }).map((r) => r.id)).toEqual([c.id]);
    expect(journal.query({ tool: 'fs.write', status: 'started' }).map((r) => r.id)).toEqual([c.id]);
  });
});

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
