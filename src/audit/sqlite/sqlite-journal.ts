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
import { toCallRecord, type CallFilter, type CallFinish, type CallRecord, type CallRow, type CallStart, type IdempotencyRecord, type Reconciliation } from '../call-record.js';
import type { BeginOutcome } from '../journal.js';
import { callRowValues, startedRowValues, type CallRowValues } from '../call-row.js';
import { chainKeyPath, loadChainSigner } from '../chain/chain-key.js';
import { ChainWriter, checkpointEveryFromEnv, type ChainFact, type PreparedEntries } from '../chain/chain-writer.js';
import { CALL_REV, callFact, chainedCallOfRecord, chainedCallOfValues } from '../chain/chain-records.js';
import type { JournalSnapshot } from '../chain/journal-snapshot.js';
import { callQuerySql } from './call-query-sql.js';
import { readJournalSnapshot } from './read-journal-snapshot.js';
import { lostRecordReason } from '../lost-record-reason.js';
import { currentHostIdentity, hostLiveness, type HostIdentity } from './host-liveness.js';
import { isJournalRefusal, JournalError } from '../journal-error.js';
import { openJournalDatabase, toJournalError } from './open-database.js';
import { prepareStatements } from './journal-statements.js';
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
  /** The chain's signing key file (`--journal-key`); default TOOLHOST_JOURNAL_KEY, else the state folder's. */
  keyFile?: string;
  /** Entries between two checkpoints; default TOOLHOST_JOURNAL_CHECKPOINT_EVERY, else 100. */
  checkpointEvery?: number;
  /** false: touch nothing at open, not even dead hosts' calls (`audit verify`, `audit export`). Default true. */
  recover?: boolean;
  env?: NodeJS.ProcessEnv;
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
  /** This journal's chain: a host's from its start, a reader's only once it writes (a recovery, a decision). */
  readonly chain: ChainWriter;
  private readonly statements;
  /**
   * The transaction of every chained write (writeChained), made once: better-sqlite3's
   * `db.transaction(fn)` builds four wrapper functions and defines five properties on each
   * (4-8 µs and their garbage), and a read-only call's lone record on the host's connection
   * paid that on every commit.
   */
  private readonly chainedWrite: Database.Transaction<
    (work: () => { value: unknown; facts: readonly ChainFact[] }, options: ChainOptions) => { value: unknown; prepared: PreparedEntries }
  >;
  private closed = false;

  private constructor(
    readonly stateDir: string,
    readonly file: string,
    private readonly db: Database.Database,
    private readonly logger: Logger,
    options: JournalOptions,
  ) {
    this.statements = prepareStatements(db);
    this.chainedWrite = db.transaction((work: () => { value: unknown; facts: readonly ChainFact[] }, options: ChainOptions) => {
      const { value, facts } = work();
      const prepared = this.chain.prepare(facts, options);
      this.insertEntries(prepared);
      return { value, prepared };
    });
    const here = currentHostIdentity();
    const isHost = options.asHost !== false;
    const key = chainKeyPath(stateDir, options.keyFile, options.env);
    const hostId = isHost ? randomUUID() : null;
    this.chain = new ChainWriter({
      role: isHost ? 'host' : 'operator',
      hostId: () => hostId,
      signer: () => loadChainSigner(key.path, !key.given),
      checkpointEvery: options.checkpointEvery ?? checkpointEveryFromEnv(options.env),
    });
    this.hostId = hostId === null ? null : this.registerHost(hostId, here, options.sessionId ?? null);
    if (options.recover !== false) this.recoverDeadHosts(here);
  }

  /**
   * Writes the `started` record; for a non-read-only call this happens before the tool runs.
   * With an idempotency key, the lookup and the insert share one IMMEDIATE
   * transaction, so two hosts on one folder cannot both claim the key.
   */
  begin(start: CallStart): BeginOutcome {
    const hostId = this.requireHost();
    return this.durably(() =>
      this.writeChained(1, (): { value: BeginOutcome; facts: ChainFact[] } => {
        if (start.idempotencyKey !== null) {
          const holder = this.findByIdempotencyKey(start.tool, start.idempotencyKey);
          if (holder !== undefined) return { value: { kind: 'held', holder }, facts: [] };
        }
        const values = startedRowValues(start, hostId);
        this.statements.insertCall.run(values);
        return { value: { kind: 'begun' }, facts: [callFact(chainedCallOfValues(values), CALL_REV.first)] };
      }),
    );
  }

  /** Closes a `started` record with its outcome. */
  finish(id: string, finish: CallFinish): void {
    this.requireOpen();
    const changes = this.writeChained(1, () => {
      const row = this.statements.finishCall.get(
        finish.status,
        finish.errorCode,
        finish.resultHash,
        finish.resultBytes,
        finish.replay,
        finish.endedAt,
        finish.egressAdmitted ?? 0,
        finish.egressRefused ?? 0,
        id,
      ) as (CallRow & { replay: string | null }) | undefined;
      return row === undefined ? { value: 0, facts: [] } : { value: 1, facts: [callFact(chainedCallOfRecord(toCallRecord(row), row.replay), CALL_REV.ended)] };
    });
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
    const values = callRowValues(start, finish, hostId);
    this.writeChained(1, () => {
      this.statements.insertCall.run(values);
      return { value: undefined, facts: [callFact(chainedCallOfValues(values), CALL_REV.first)] };
    });
  }

  /**
   * One-shot records of many calls, in one transaction (a batch of read-only
   * calls: record-batch.ts), as rows of callRowValues built with this host's id.
   */
  recordRows(rows: readonly CallRowValues[]): void {
    this.requireHost();
    this.writeChained(rows.length, () => {
      for (const row of rows) this.statements.insertCall.run(row);
      return { value: undefined, facts: rows.map((row) => callFact(chainedCallOfValues(row), CALL_REV.first)) };
    });
  }

  /**
   * The chain entries of a batch of one-shot rows that another connection (the
   * writer thread) inserts in one transaction; settle them with the outcome.
   * undefined when the batch cannot go there (the chain is not opened yet).
   */
  prepareRows(rows: readonly CallRowValues[]): PreparedEntries | undefined {
    this.requireHost();
    if (this.chain.isNew) return undefined;
    return this.chain.prepare(rows.map((row) => callFact(chainedCallOfValues(row), CALL_REV.first)));
  }

  /** Inserts a batch prepared with prepareRows on this connection (the writer thread is gone); settleRows follows. */
  insertPrepared(rows: readonly CallRowValues[], entries: readonly (readonly unknown[])[]): void {
    this.write(() =>
      this.db
        .transaction(() => {
          for (const row of rows) this.statements.insertCall.run(row);
          for (const entry of entries) this.statements.insertEntry.run(entry);
        })
        .immediate(),
    );
  }

  /** The outcome of a batch prepared with prepareRows: committed, or failed with `error`. */
  settleRows(prepared: PreparedEntries, rows: number, error?: unknown): void {
    if (error === undefined) this.chain.commit(prepared);
    else this.chain.fail(rows, lostRecordReason(error));
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
      { id: string; status: IdempotencyRecord['status']; args_hash: string; replay: string | null; reconciliation: Reconciliation | null } | undefined;
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
      this.writeChained(1, () => {
        const existing = this.get(id);
        if (existing === undefined) throw new JournalError('unknown_call', `No call ${id} in the journal.`, { id });
        if (existing.status !== 'interrupted' || existing.reconciliation !== null) {
          throw new JournalError(
            'not_interrupted',
            `Call ${id} is ${existing.status}${existing.reconciliation ? ` (reconciled: ${existing.reconciliation})` : ''}, not an unreconciled interrupted call.`,
            { id, status: existing.status, reconciliation: existing.reconciliation },
          );
        }
        const row = this.statements.reconcile.get({ id, reconciliation: action, status: action === 'skip' ? 'skipped' : 'interrupted', now: Date.now() }) as CallRow & {
          replay: string | null;
        };
        const record = toCallRecord(row);
        return { value: record, facts: [callFact(chainedCallOfRecord(record, row.replay), CALL_REV.reconciled)] };
      }),
    );
  }

  /** Call records, newest first. */
  query(filter: CallFilter = {}): CallRecord[] {
    this.requireOpen();
    const { sql, values } = callQuerySql(filter);
    return (this.db.prepare(sql).all(values) as CallRow[]).map(toCallRecord);
  }

  /** Everything `audit verify` checks, read in one snapshot (src/audit/verify-journal.ts). */
  readSnapshot(): JournalSnapshot {
    this.requireOpen();
    return readJournalSnapshot(this.db);
  }

  /**
   * Runs `work` and chains the facts it returns in one IMMEDIATE transaction: the
   * rows and their entries commit together or not at all. `records` is how many
   * call or approval records the write carries: counted as a gap if it fails.
   */
  writeChained<T>(records: number, work: () => { value: T; facts: readonly ChainFact[] }, options: ChainOptions = {}): T {
    try {
      const { value, prepared } = this.chainedWrite.immediate(work, options);
      this.chain.commit(prepared);
      return value as T;
    } catch (error) {
      // A refusal (unknown call, decided approval) wrote nothing and lost nothing.
      this.chain.fail(isJournalRefusal(error) ? 0 : records, lostRecordReason(error));
      throw toJournalError(error, this.file);
    }
  }

  private insertEntries(prepared: PreparedEntries): void {
    for (const entry of prepared.entries) {
      if (entry.kind === 'open') this.statements.insertChain.run(entry.chain, this.hostId === null ? 'operator' : 'host', entry.at);
      this.statements.insertEntry.run(entry.chain, entry.seq, entry.prev, entry.hash, entry.kind, entry.ref, entry.rev, entry.at, entry.record);
    }
    const last = prepared.entries[prepared.entries.length - 1];
    if (prepared.final && last !== undefined) this.statements.closeChain.run(last.at, last.chain);
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
      if (this.hostId !== null) this.endHost(this.hostId, 'closed', true);
      // A reader that wrote (a recovery, a reconciliation) signs what it wrote.
      else if (!this.chain.isNew && !this.chain.isFinal) this.writeChained(0, () => ({ value: undefined, facts: [] }), { final: true });
    } catch (error) {
      this.logger.error({ err: error }, 'journal: could not end the host row on close');
    } finally {
      this.closed = true;
      this.db.close();
    }
  }

  // The host row and its chain's first entry (its public key) in one transaction: a key that cannot be read stops the host here.
  private registerHost(id: string, here: HostIdentity, sessionId: string | null): string {
    this.writeChained(
      0,
      () => {
        this.statements.insertHost.run({
          id,
          pid: here.pid,
          machine: here.machine,
          bootId: here.bootId,
          processStart: here.processStart,
          sessionId,
          now: Date.now(),
        });
        return { value: undefined, facts: [] };
      },
      { open: true },
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

  // The host's started calls become interrupted (each a chained fact of this journal's chain); its own close signs the chain's end.
  private endHost(hostId: string, reason: 'closed' | 'dead', final = false): string[] {
    return this.writeChained(
      0,
      () => {
        const now = Date.now();
        const rows = this.statements.interruptCallsOf.all({ hostId }) as (CallRow & { replay: string | null })[];
        this.statements.endHost.run({ hostId, now, reason });
        const records = rows.map((row) => chainedCallOfRecord(toCallRecord(row), row.replay));
        return { value: records.map((record) => record.id), facts: records.map((record) => callFact(record, CALL_REV.ended)) };
      },
      { final },
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

/** How a chained write ends or opens its chain (ChainWriter.prepare). */
interface ChainOptions {
  readonly final?: boolean;
  readonly open?: boolean;
}

interface HostRow {
  id: string;
  pid: number;
  machine: string;
  boot_id: string | null;
  process_start: string | null;
}
