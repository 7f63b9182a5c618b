// The journal (SPEC section 7): one SQLite record per call, written before a
// non-read-only call runs, so a host that dies mid-call leaves a `started`
// record that the next host to open the folder marks `interrupted`. Several
// hosts may share a state folder: WAL, a busy timeout and one short
// transaction per write. Every write is synchronous. When begin() (the
// write-ahead record) or reconcile() returns, the record is on disk (fsynced);
// other records (a read-only call's one record, a finish) have reached the OS,
// which survives a host crash; power loss may lose the last of them, and a
// lost finish leaves a `started` record that recovery marks `interrupted`
// (the cautious reading). One fsync per read-only call would triple its cost.
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { createSilentLogger, type Logger } from '../../log.js';
import {
  CALL_COLUMNS,
  toCallRecord,
  type CallFilter,
  type CallFinish,
  type CallRecord,
  type CallRow,
  type CallStart,
  type IdempotencyRecord,
  type Reconciliation,
} from '../call-record.js';
import type { BeginOutcome } from '../journal.js';
import { CALL_ROW_ARITY, CALL_ROW_COLUMNS, callRowValues, startedRowValues, type CallRowValues } from '../call-row.js';
import { currentHostIdentity, hostLiveness, type HostIdentity } from './host-liveness.js';
import { JournalError } from '../journal-error.js';
import { openJournalDatabase, toJournalError } from './open-database.js';
import type { MultiRowInsert } from './record-writer.js';
import { ensureStateDir, journalPathOf } from '../state-dir.js';


export interface JournalOptions {
  logger?: Logger;
  /** The session this host serves, kept on its host row. */
  sessionId?: string;
  /**
   * false for readers (toolhost audit, reconcile): no host row is written and
   * begin/record refuse. Dead hosts are still recovered. Default true.
   */
  asHost?: boolean;
  /** The database file (`--journal sqlite:PATH`); default <state>/journal.sqlite. */
  file?: string;
}

export class SqliteJournal {
  /** Opens the journal of a state folder (created 0700), migrating it and recovering dead hosts' calls. */
  static open(stateDir: string, options: JournalOptions = {}): SqliteJournal {
    const logger = options.logger ?? createSilentLogger();
    ensureStateDir(stateDir, logger);
    const file = options.file ?? journalPathOf(stateDir);
    if (options.file !== undefined) ensureStateDir(dirname(file), logger);
    const db = openJournalDatabase(file, logger);
    try {
      return new SqliteJournal(stateDir, file, db, logger, options);
    } catch (error) {
      db.close();
      throw toJournalError(error, file);
    }
  }

  /** This process's row in `hosts`; null for a reader. */
  readonly hostId: string | null;
  private readonly statements;
  private closed = false;

  private constructor(
    readonly stateDir: string,
    readonly file: string,
    private readonly db: Database.Database,
    private readonly logger: Logger,
    options: JournalOptions,
  ) {
    this.statements = prepareStatements(db);
    const here = currentHostIdentity();
    this.hostId = options.asHost === false ? null : this.registerHost(here, options.sessionId ?? null);
    this.recoverDeadHosts(here);
  }

  /**
   * Writes the `started` record; for a non-read-only call this happens before the tool runs.
   * With an idempotency key, the lookup and the insert share one IMMEDIATE
   * transaction, so two hosts on one folder cannot both claim the key.
   */
  begin(start: CallStart): BeginOutcome {
    const hostId = this.requireHost();
    return this.durably(() =>
      this.db
        .transaction((): BeginOutcome => {
          if (start.idempotencyKey !== null) {
            const holder = this.findByIdempotencyKey(start.tool, start.idempotencyKey);
            if (holder !== undefined) return { kind: 'held', holder };
          }
          this.statements.insertCall.run(startedRowValues(start, hostId));
          return { kind: 'begun' };
        })
        .immediate(),
    );
  }

  /** Closes a `started` record with its outcome. */
  finish(id: string, finish: CallFinish): void {
    this.requireOpen();
    const changes = this.write(
      () =>
        this.statements.finishCall.run(
          finish.status,
          finish.errorCode,
          finish.resultHash,
          finish.resultBytes,
          finish.replay,
          finish.endedAt,
          finish.egressAdmitted ?? 0,
          finish.egressRefused ?? 0,
          id,
        ).changes,
    );
    if (changes === 1) return;
    const existing = this.get(id);
    if (existing === undefined) {
      throw new JournalError('unknown_call', `No call ${id} in the journal.`, { id });
    }
    // Marked interrupted by our own close() or reconciled meanwhile: the journal keeps what the operator saw.
    this.logger.error({ callId: id, status: existing.status, outcome: finish.status }, 'journal: finish on a call that is no longer started');
  }

  /** One-shot record for a call refused or answered without running. */
  record(start: CallStart, finish: CallFinish): void {
    const hostId = this.requireHost();
    this.write(() => this.statements.insertCall.run(callRowValues(start, finish, hostId)));
  }

  /**
   * One-shot records of many calls, in one transaction (a batch of read-only
   * calls: record-batch.ts), as rows of callRowValues built with this host's id.
   */
  recordRows(rows: readonly CallRowValues[]): void {
    this.requireHost();
    this.write(() => this.statements.insertCalls(rows));
  }

  /**
   * The record that governs an idempotency key of a tool, or undefined when
   * the key may run: `started` (in flight on some host) first, then an
   * unreconciled `interrupted` (refuse: interrupted_side_effect), then the
   * latest `completed` (replay it), then `skipped` (an operator confirmed the
   * effect happened; there is no result to replay: do not run again).
   * failed, denied, rejected, cancelled and rerun-reconciled calls do not hold the key.
   */
  findByIdempotencyKey(tool: string, key: string): IdempotencyRecord | undefined {
    this.requireOpen();
    const row = this.statements.findByKey.get({ tool, key }) as
      | { id: string; status: IdempotencyRecord['status']; args_hash: string; replay: string | null; reconciliation: Reconciliation | null }
      | undefined;
    if (row === undefined) return undefined;
    return { id: row.id, status: row.status, argsHash: row.args_hash, replay: row.replay, reconciliation: row.reconciliation };
  }

  /**
   * An operator's decision on an interrupted call. `rerun`: the effect did not
   * happen (or may happen twice); the record stays `interrupted` with
   * reconciliation `rerun` and its key runs again. `skip`: the effect happened;
   * the record becomes `skipped` and its key is done, with no result to replay.
   * Throws unknown_call or not_interrupted (also when already reconciled).
   */
  reconcile(id: string, action: Reconciliation): CallRecord {
    this.requireOpen();
    return this.durably(() =>
      this.db
        .transaction(() => {
          const existing = this.get(id);
          if (existing === undefined) throw new JournalError('unknown_call', `No call ${id} in the journal.`, { id });
          if (existing.status !== 'interrupted' || existing.reconciliation !== null) {
            throw new JournalError(
              'not_interrupted',
              `Call ${id} is ${existing.status}${existing.reconciliation ? ` (reconciled: ${existing.reconciliation})` : ''}, not an unreconciled interrupted call.`,
              { id, status: existing.status, reconciliation: existing.reconciliation },
            );
          }
          this.statements.reconcile.run({ id, reconciliation: action, status: action === 'skip' ? 'skipped' : 'interrupted', now: Date.now() });
          return this.get(id) as CallRecord;
        })
        .immediate(),
    );
  }

  /** Call records, newest first. */
  query(filter: CallFilter = {}): CallRecord[] {
    this.requireOpen();
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    if (filter.tool !== undefined) (where.push('tool = @tool'), (params['tool'] = filter.tool));
    if (filter.status !== undefined) (where.push('status = @status'), (params['status'] = filter.status));
    if (filter.since !== undefined) (where.push('started_at >= @since'), (params['since'] = filter.since));
    const limit = filter.limit === undefined ? '' : ' LIMIT @limit';
    if (filter.limit !== undefined) params['limit'] = Math.max(0, Math.floor(filter.limit));
    const sql =
      `SELECT ${CALL_COLUMNS} FROM calls` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY started_at DESC, seq DESC${limit}`;
    return (this.db.prepare(sql).all(params) as CallRow[]).map(toCallRecord);
  }

  /** One call by id. */
  get(id: string): CallRecord | undefined {
    this.requireOpen();
    const row = this.statements.getCall.get(id) as CallRow | undefined;
    return row === undefined ? undefined : toCallRecord(row);
  }

  /** The database handle, for the artifact store of this folder only. */
  get database(): Database.Database {
    this.requireOpen();
    return this.db;
  }

  /** Marks this host's still-running calls interrupted, ends its host row, closes the file. Idempotent. */
  close(): void {
    if (this.closed) return;
    try {
      if (this.hostId !== null) this.endHost(this.hostId, 'closed');
    } catch (error) {
      this.logger.error({ err: error }, 'journal: could not end the host row on close');
    } finally {
      this.closed = true;
      this.db.close();
    }
  }

  private registerHost(here: HostIdentity, sessionId: string | null): string {
    const id = randomUUID();
    this.write(() =>
      this.statements.insertHost.run({
        id,
        pid: here.pid,
        machine: here.machine,
        bootId: here.bootId,
        processStart: here.processStart,
        sessionId,
        now: Date.now(),
      }),
    );
    return id;
  }

  // A `started` call whose host is gone has an unknown effect: it becomes
  // `interrupted`. Hosts on other machines are left alone (we cannot see them).
  private recoverDeadHosts(here: HostIdentity): void {
    const running = this.statements.runningHosts.all() as HostRow[];
    for (const host of running) {
      if (host.id === this.hostId) continue;
      const identity = { pid: host.pid, machine: host.machine, bootId: host.boot_id, processStart: host.process_start };
      const liveness = hostLiveness(identity, here);
      if (liveness === 'unknown') {
        this.logger.warn({ hostId: host.id, machine: host.machine }, 'journal: a host on another machine shares this state folder');
      }
      if (liveness !== 'dead') continue;
      const interrupted = this.endHost(host.id, 'dead');
      if (interrupted.length > 0) {
        this.logger.warn({ hostId: host.id, pid: host.pid, calls: interrupted }, 'journal: calls of a dead host marked interrupted');
      }
    }
  }

  private endHost(hostId: string, reason: 'closed' | 'dead'): string[] {
    return this.write(() =>
      this.db
        .transaction(() => {
          const now = Date.now();
          const ids = this.statements.runningCallsOf.all(hostId) as string[];
          this.statements.interruptCallsOf.run({ hostId });
          this.statements.endHost.run({ hostId, now, reason });
          return ids;
        })
        .immediate(),
    );
  }

  private write<T>(operation: () => T): T {
    try {
      return operation();
    } catch (error) {
      throw toJournalError(error, this.file);
    }
  }

  // The connection runs with synchronous=NORMAL; this one commit runs with
  // FULL, so it is fsynced (with every earlier commit in the WAL) before it returns.
  private durably<T>(operation: () => T): T {
    // Not a prepared statement: SQLite applies this pragma when it compiles it.
    return this.write(() => {
      this.db.pragma('synchronous = FULL');
      try {
        return operation();
      } finally {
        this.db.pragma('synchronous = NORMAL');
      }
    });
  }

  private requireOpen(): void {
    if (this.closed) throw new JournalError('journal_closed', 'The journal is closed.', {});
  }

  /** This host's row id; throws journal_closed, or journal_read_only for a reader. */
  requireHost(): string {
    this.requireOpen();
    if (this.hostId === null) {
      throw new JournalError('journal_read_only', 'This journal was opened for reading; it records no calls.', {});
    }
    return this.hostId;
  }
}

interface HostRow {
  id: string;
  pid: number;
  machine: string;
  boot_id: string | null;
  process_start: string | null;
}

/** The INSERT of call records as head and one row's placeholders, its values rows of callRowValues (the batch writer thread puts many rows in one statement). */
export const INSERT_CALLS: MultiRowInsert = {
  head: `INSERT INTO calls (${CALL_ROW_COLUMNS}) VALUES `,
  row: `(${Array.from({ length: CALL_ROW_ARITY }, () => '?').join(', ')})`,
  arity: CALL_ROW_ARITY,
};

/** The one-row INSERT of a call record. */
export const INSERT_CALL_SQL = INSERT_CALLS.head + INSERT_CALLS.row;

function prepareStatements(db: Database.Database) {
  const insertCall = db.prepare(INSERT_CALL_SQL);
  return {
    insertHost: db.prepare(
      `INSERT INTO hosts (id, pid, machine, boot_id, process_start, session_id, started_at)
       VALUES (@id, @pid, @machine, @bootId, @processStart, @sessionId, @now)`,
    ),
    runningHosts: db.prepare(`SELECT id, pid, machine, boot_id, process_start FROM hosts WHERE ended_at IS NULL`),
    runningCallsOf: db.prepare(`SELECT id FROM calls WHERE host_id = ? AND status = 'started'`).pluck(),
    // ended_at stays NULL: when an interrupted call stopped is unknown.
    interruptCallsOf: db.prepare(`UPDATE calls SET status = 'interrupted' WHERE host_id = @hostId AND status = 'started'`),
    endHost: db.prepare(`UPDATE hosts SET ended_at = @now, end_reason = @reason WHERE id = @hostId AND ended_at IS NULL`),
    insertCall,
    insertCalls: db.transaction((rows: readonly CallRowValues[]) => {
      for (const row of rows) insertCall.run(row);
    }),
    finishCall: db.prepare(
      `UPDATE calls SET status = ?, error_code = ?, result_hash = ?, result_bytes = ?,
         replay = ?, ended_at = ?, egress_admitted = ?, egress_refused = ?
       WHERE id = ? AND status = 'started'`,
    ),
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
    reconcile: db.prepare(
      `UPDATE calls SET status = @status, reconciliation = @reconciliation, reconciled_at = @now WHERE id = @id`,
    ),
  };
}
