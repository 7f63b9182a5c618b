// The fleet store behind the Journal interface (SPEC section 7.1): one
// PostgreSQL database shared by every host. Each host holds a lease that a
// background timer renews; any host (and audit, reconcile) turns the `started`
// calls of a host whose lease ran out into `interrupted`, by the database's
// clock, in one statement. An idempotency key is claimed by a unique row in
// the same transaction as the write-ahead record. Artifacts live in the
// database, so any host serves a link another gave out.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import { createSilentLogger, type Logger } from '../../log.js';
import { artifactUri, DEFAULT_ARTIFACT_TTL_MS, parseArtifactRef, type StoredArtifact } from '../artifact-ref.js';
import {
  decideRefusal,
  spendRefusalOf,
  toApprovalRecord,
  approvalJsonColumns,
  type ApprovalDecision,
  type DecisionExtras,
  type ApprovalRecord,
  type ApprovalRow,
  type NewApproval,
  type SpendOutcome,
} from '../approval-record.js';
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
import { callRowValues, startedRowValues } from '../call-row.js';
import { sha256Hex } from '../hash.js';
import { isJournalRefusal, JournalError } from '../journal-error.js';
import type { BeginOutcome, Journal } from '../journal.js';
import { createPool, unreachable, writeFailed } from './pg-connection.js';
import { RecordBatch, type PendingRecord } from '../record-batch.js';
import { migratePostgres } from './pg-schema.js';
import { PostgresRates } from './pg-rates.js';
import type { RateCount, RateOutcome } from '../rate-store.js';
import { insertCallsText, insertEntriesText, SQL, type NamedStatement } from './pg-statements.js';
import { APPROVAL_COLUMNS } from '../approval-record.js';
import { entryRowValues, type ChainEntry } from '../chain/chain-entry.js';
import { chainKeyPath, loadChainSigner } from '../chain/chain-key.js';
import { APPROVAL_REV, CALL_REV, approvalFact, callFact, chainedCallOfRecord, chainedCallOfValues } from '../chain/chain-records.js';
import { ChainWriter, checkpointEveryFromEnv, type ChainFact, type PreparedEntries } from '../chain/chain-writer.js';
import type { ChainRow, JournalSnapshot } from '../chain/journal-snapshot.js';
import { callFilterSql } from '../call-filter-sql.js';
import { lostRecordReason } from '../lost-record-reason.js';

/** How long a host's lease lasts unless renewed; renewed every third of it. */
export const DEFAULT_LEASE_MS = 30_000;
/** The environment variable that sets the lease (tests make it short). */
export const LEASE_ENV = 'TOOLHOST_JOURNAL_LEASE_MS';
/** Largest artifact the database takes (bytes); results this large are refused, not truncated. */
const MAX_PG_ARTIFACT_BYTES = 64 * 1024 * 1024;
const ARTIFACT_SWEEP_INTERVAL_MS = 10 * 60 * 1000;

interface PostgresStoreOptions {
  logger?: Logger;
  sessionId?: string;
  /** false for readers (audit, reconcile, approvals): no host row, no lease. Default true. */
  asHost?: boolean;
  leaseMs?: number;
  artifactTtlMs?: number;
  /** The state folder, whose signing key the chain uses unless keyFile names one. */
  stateDir?: string;
  keyFile?: string;
  checkpointEvery?: number;
  /** false: write nothing at open, not even expired hosts' calls (`audit verify`). Default true. */
  recover?: boolean;
  env?: NodeJS.ProcessEnv;
}

type CallRowWithReplay = CallRow & { replay: string | null };

/** A chained write waiting for its group's transaction. */
interface QueuedWrite {
  readonly records: number;
  readonly work: ChainedWork<unknown>;
  readonly options: { readonly final?: boolean; readonly open?: boolean };
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** At most this many chained writes share one transaction. */
const MAX_GROUPED_WRITES = 64;

/** What a chained write does inside its transaction: its value, and the facts to chain. */
type ChainedWork<T> = (client: pg.PoolClient) => Promise<{ value: T; facts: readonly ChainFact[] }>;

/** Connects, migrates (or refuses), registers this host's lease and recovers expired hosts' calls. */
export async function openPostgresStore(connectionString: string, display: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const logger = options.logger ?? createSilentLogger();
  const pool = createPool(connectionString);
  // An idle connection that breaks (server restart) must not crash the host: the pool replaces it.
  pool.on('error', (error) =>
    logger.warn({ err: { message: error.message, code: (error as { code?: unknown }).code } }, 'journal: a PostgreSQL connection broke; reconnecting on the next query'),
  );
  try {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw unreachable(error, display);
    }
    try {
      await migratePostgres(client, display);
    } catch (error) {
      throw error instanceof JournalError ? error : unreachable(error, display);
    } finally {
      client.release();
    }
    const store = new PostgresStore(pool, display, logger, options);
    await store.start(options);
    return store;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}

class PostgresStore implements Journal {
  readonly kind = 'postgres' as const;
  hostId: string | null = null;
  readonly leaseMs: number;
  readonly #pool: pg.Pool;
  readonly #logger: Logger;
  readonly #artifactTtlMs: number;
  #renewal: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #lastSweepMs = 0;
  #closed = false;
  #sessionId: string | null = null;
  /** Read-only calls' records, committed per event-loop turn in one statement. */
  readonly #batch: RecordBatch;
  readonly #rates: PostgresRates;
  #closing: Promise<void> | undefined;
  /** This journal's chain (a host's from its start; a reader's once it writes). */
  readonly chain: ChainWriter;
  /** The chained writes, one at a time: each chains after the one before it committed or failed. */
  readonly #queue: QueuedWrite[] = [];
  /** The group commit loop while writes are queued or committing. */
  #draining: Promise<void> | undefined;
  readonly #role: 'host' | 'operator';

  constructor(
    pool: pg.Pool,
    readonly location: string,
    logger: Logger,
    options: PostgresStoreOptions,
  ) {
    this.#pool = pool;
    this.#rates = new PostgresRates(pool);
    this.#logger = logger;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#artifactTtlMs = options.artifactTtlMs ?? DEFAULT_ARTIFACT_TTL_MS;
    if (!Number.isFinite(this.leaseMs) || this.leaseMs < 100) throw new RangeError(`the journal lease must be at least 100 ms, got ${this.leaseMs}`);
    // As the SQLite store: a zero or negative TTL would store every artifact already expired.
    if (!Number.isFinite(this.#artifactTtlMs) || this.#artifactTtlMs <= 0)
      throw new RangeError(`artifactTtlMs must be a positive number of milliseconds, got ${this.#artifactTtlMs}`);
    this.#batch = new RecordBatch((records) => this.#recordMany(records), pendingId, logger);
    const key = chainKeyPath(options.stateDir ?? '.toolhost', options.keyFile, options.env);
    const isHost = options.asHost !== false;
    this.#role = isHost ? 'host' : 'operator';
    this.chain = new ChainWriter({
      role: isHost ? 'host' : 'operator',
      hostId: () => this.hostId,
      signer: () => loadChainSigner(key.path, !key.given),
      checkpointEvery: options.checkpointEvery ?? checkpointEveryFromEnv(options.env),
    });
  }

  /** Registers the host row (with its chain's first entry) and starts renewing its lease; recovers expired hosts either way. */
  async start(options: PostgresStoreOptions): Promise<void> {
    if (options.asHost !== false) {
      this.#sessionId = options.sessionId ?? null;
      const id = randomUUID();
      // Set first: the chain's opening names the host row it writes in the same transaction.
      this.hostId = id;
      try {
        await this.#chained(
          0,
          async (client) => {
            await this.#runOn(client, SQL.insertHost, [id, process.pid, hostname(), options.sessionId ?? null, Date.now(), this.leaseMs]);
            return { value: undefined, facts: [] };
          },
          { open: true },
        );
      } catch (error) {
        this.hostId = null;
        throw error;
      }
      this.#renewal = setInterval(() => void this.#renewAndSweep(), Math.max(50, Math.floor(this.leaseMs / 3)));
      this.#renewal.unref();
    }
    if (options.recover !== false) await this.expireLeases();
  }

  /** Ends hosts whose lease ran out and marks their started calls interrupted (chained facts); returns those call ids. */
  async expireLeases(): Promise<string[]> {
    const rows = await this.#chained(0, async (client) => {
      const result = await this.#runOn<CallRowWithReplay>(client, SQL.expireLeases, [Date.now()]);
      return { value: result.rows, facts: result.rows.map((row) => callFact(chainedCallOfRecord(toCallRecord(row), row.replay), CALL_REV.ended)) };
    });
    if (rows.length > 0) {
      this.#logger.warn(
        { calls: rows.map((row) => row.id), hosts: [...new Set(rows.map((row) => row.host_id))] },
        'journal: calls of hosts whose lease expired marked interrupted',
      );
    }
    return rows.map((row) => row.id);
  }

  async begin(start: CallStart): Promise<BeginOutcome> {
    const hostId = this.#requireHost();
    const values = startedRowValues(start, hostId);
    const fact = (): ChainFact[] => [callFact(chainedCallOfValues(values), CALL_REV.first)];
    return this.#chained<BeginOutcome>(1, async (client) => {
      if (start.idempotencyKey === null) {
        await this.#runOn(client, SQL.insertCall, values);
        return { value: { kind: 'begun' }, facts: fact() };
      }
      // A holder can finish (and free the key) between the failed claim and the lookup: try again then.
      for (let attempt = 0; attempt < 3; attempt++) {
        await this.#runOn(client, SAVEPOINT, []);
        await this.#runOn(client, SQL.insertCall, values);
        const claim = await this.#runOn<{ call_id: string }>(client, SQL.claimKey, [start.tool, start.idempotencyKey, start.id]);
        if (claim.rows[0]?.call_id === start.id) {
          await this.#runOn(client, RELEASE_SAVEPOINT, []);
          return { value: { kind: 'begun' }, facts: fact() };
        }
        await this.#runOn(client, ROLLBACK_TO_SAVEPOINT, []);
        const holder = await this.#findByKeyOn(client, start.tool, start.idempotencyKey);
        if (holder !== undefined) return { value: { kind: 'held', holder }, facts: [] };
      }
      throw new JournalError('journal_write_failed', `The idempotency key of ${start.tool} kept changing hands; try the call again.`, { tool: start.tool });
    });
  }

  async finish(id: string, finish: CallFinish): Promise<void> {
    this.#requireOpen();
    const changed = await this.#chained(1, async (client) => {
      const result = await this.#runOn<CallRowWithReplay>(client, SQL.finishCall, [
        id,
        finish.status,
        finish.errorCode,
        finish.resultHash,
        finish.resultBytes,
        finish.replay,
        finish.endedAt,
        finish.egressAdmitted ?? 0,
        finish.egressRefused ?? 0,
      ]);
      const row = result.rows[0];
      return row === undefined ? { value: false, facts: [] } : { value: true, facts: [callFact(chainedCallOfRecord(toCallRecord(row), row.replay), CALL_REV.ended)] };
    });
    if (changed) return;
    const existing = await this.get(id);
    if (existing === undefined) throw new JournalError('unknown_call', `No call ${id} in the journal.`, { id });
    this.#logger.error({ callId: id, status: existing.status, outcome: finish.status }, 'journal: finish on a call that is no longer started');
  }

  async record(start: CallStart, finish: CallFinish): Promise<void> {
    const hostId = this.#requireHost();
    const values = callRowValues(start, finish, hostId);
    await this.#chained(1, async (client) => {
      await this.#runOn(client, SQL.insertCall, values);
      return { value: undefined, facts: [callFact(chainedCallOfValues(values), CALL_REV.first)] };
    });
  }

  recordSoon(start: CallStart, finish: CallFinish, alone = false): Promise<void> {
    this.#requireHost();
    return this.#batch.add({ start, finish }, alone);
  }

  flush(): Promise<void> {
    return this.#batch.flush();
  }

  // One multi-row INSERT for the whole batch, with its chain entries, in one transaction.
  // The host id is read when the batch is written (a lost lease moves later calls to a new row).
  async #recordMany(records: readonly PendingRecord[]): Promise<void> {
    await this.#chained(records.length, async (client) => {
      const hostId = this.hostId as string;
      const rows = records.map(({ start, finish }) => callRowValues(start, finish, hostId));
      await this.#runOn(client, { name: '', text: insertCallsText(records.length) }, rows.flat());
      return { value: undefined, facts: rows.map((row) => callFact(chainedCallOfValues(row), CALL_REV.first)) };
    });
  }

  /** Everything `audit verify` checks, read in one snapshot (REPEATABLE READ). */
  async readSnapshot(): Promise<JournalSnapshot> {
    this.#requireOpen();
    await this.#batch.flush();
    await this.#draining;
    const client = await this.#connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const entries = (await client.query<ChainEntry>(`SELECT chain_id AS chain, seq, prev, hash, kind, ref, rev, at, record FROM chain_entries ORDER BY chain_id, seq`)).rows;
      const chains = (
        await client.query<{ id: string; role: string; opened_at: number; closed_at: number | null }>(`SELECT id, role, opened_at, closed_at FROM chains ORDER BY opened_at, id`)
      ).rows.map((row): ChainRow => ({ id: row.id, role: row.role, openedAt: row.opened_at, closedAt: row.closed_at }));
      const calls = (await client.query<CallRowWithReplay>(`SELECT ${CALL_COLUMNS}, replay FROM calls ORDER BY seq`)).rows.map((row) =>
        chainedCallOfRecord(toCallRecord(row), row.replay),
      );
      const approvals = (await client.query<ApprovalRow>(`SELECT ${APPROVAL_COLUMNS} FROM approvals ORDER BY created_at, id`)).rows.map(toApprovalRecord);
      const since = (await client.query<{ chained_since: number }>(`SELECT chained_since FROM chain_meta WHERE id = 1`)).rows[0]?.chained_since;
      await client.query('COMMIT');
      return { entries: entries.map((entry) => ({ ...entry, seq: Number(entry.seq), at: Number(entry.at) })), chains, calls, approvals, chainedSince: since ?? null };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw writeFailed(error, this.location);
    } finally {
      client.release();
    }
  }

  /**
   * Runs `work` in a transaction and chains the facts it returns in the same
   * transaction. Chained writes of this journal are group committed: the writes
   * queued while one transaction runs go together in the next (their statements
   * in order, one INSERT of their entries, one COMMIT), so each entry's `prev` is
   * the entry before it and no write waits for more than one transaction ahead.
   * `records` is how many call or approval records the write carries, counted as
   * a gap if it fails. A refusal (an unknown call, a decided approval) fails its
   * own write only; a failed statement fails the whole group.
   */
  #chained<T>(records: number, work: ChainedWork<T>, options: { final?: boolean; open?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ records, work, options, resolve: resolve as (value: unknown) => void, reject });
      this.#draining ??= this.#drain();
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      // A final write closes the chain: nothing may follow it in its group.
      const end = this.#queue.findIndex((write) => write.options.final === true);
      const take = Math.min(MAX_GROUPED_WRITES, end < 0 ? this.#queue.length : end + 1);
      await this.#commitGroup(this.#queue.splice(0, take));
    }
    this.#draining = undefined;
  }

  async #commitGroup(group: readonly QueuedWrite[]): Promise<void> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    let prepared: PreparedEntries | undefined;
    try {
      await this.#transaction(async (client) => {
        const facts: ChainFact[] = [];
        for (const write of group) {
          try {
            const done = await write.work(client);
            facts.push(...done.facts);
            outcomes.push({ ok: true, value: done.value });
          } catch (error) {
            // A statement that failed aborted the transaction: the group goes. A write's own refusal does not.
            if (!isOwnFailure(error)) throw error;
            outcomes.push({ ok: false, error });
          }
        }
        prepared = this.chain.prepare(facts, { final: group.some((write) => write.options.final === true), open: group.some((write) => write.options.open === true) });
        await this.#insertEntries(client, prepared);
      });
    } catch (error) {
      const lost = group.reduce((sum, write, index) => sum + (outcomes[index]?.ok === false ? 0 : write.records), 0);
      this.chain.fail(lost, lostRecordReason(error));
      for (const write of group) write.reject(error);
      return;
    }
    if (prepared !== undefined) this.chain.commit(prepared);
    group.forEach((write, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok === true) write.resolve(outcome.value);
      else write.reject(outcome?.error);
    });
  }

  async #insertEntries(client: pg.PoolClient, prepared: PreparedEntries): Promise<void> {
    if (prepared.entries.length === 0) return;
    const first = prepared.entries[0] as ChainEntry;
    if (first.kind === 'open') await this.#runOn(client, SQL.insertChain, [first.chain, this.#role, first.at]);
    await this.#runOn(client, { name: '', text: insertEntriesText(prepared.entries.length) }, prepared.entries.flatMap(entryRowValues));
    const last = prepared.entries[prepared.entries.length - 1] as ChainEntry;
    if (prepared.final) await this.#runOn(client, SQL.closeChain, [last.chain, last.at]);
  }

  async #findByKeyOn(client: pg.PoolClient, tool: string, key: string): Promise<IdempotencyRecord | undefined> {
    const result = await this.#runOn<{ id: string; status: IdempotencyRecord['status']; args_hash: string; replay: string | null; reconciliation: Reconciliation | null }>(
      client,
      SQL.findByKey,
      [tool, key],
    );
    const row = result.rows[0];
    return row === undefined ? undefined : { id: row.id, status: row.status, argsHash: row.args_hash, replay: row.replay, reconciliation: row.reconciliation };
  }

  // Reads see this host's queued records: they flush first.
  async findByIdempotencyKey(tool: string, key: string): Promise<IdempotencyRecord | undefined> {
    this.#requireOpen();
    await this.#batch.flush();
    const result = await this.#run<{ id: string; status: IdempotencyRecord['status']; args_hash: string; replay: string | null; reconciliation: Reconciliation | null }>(
      SQL.findByKey,
      [tool, key],
    );
    const row = result.rows[0];
    return row === undefined ? undefined : { id: row.id, status: row.status, argsHash: row.args_hash, replay: row.replay, reconciliation: row.reconciliation };
  }

  async reconcile(id: string, action: Reconciliation): Promise<CallRecord> {
    this.#requireOpen();
    await this.#batch.flush();
    await this.expireLeases();
    return this.#chained(1, async (client) => {
      const found = await this.#runOn<CallRow>(client, SQL.getCallForUpdate, [id]);
      const row = found.rows[0];
      if (row === undefined) throw new JournalError('unknown_call', `No call ${id} in the journal.`, { id });
      const existing = toCallRecord(row);
      if (existing.status !== 'interrupted' || existing.reconciliation !== null) {
        throw new JournalError(
          'not_interrupted',
          `Call ${id} is ${existing.status}${existing.reconciliation ? ` (reconciled: ${existing.reconciliation})` : ''}, not an unreconciled interrupted call.`,
          { id, status: existing.status, reconciliation: existing.reconciliation },
        );
      }
      const after = (await this.#runOn<CallRowWithReplay>(client, SQL.reconcile, [id, action === 'skip' ? 'skipped' : 'interrupted', action, Date.now()]))
        .rows[0] as CallRowWithReplay;
      const record = toCallRecord(after);
      return { value: record, facts: [callFact(chainedCallOfRecord(record, after.replay), CALL_REV.reconciled)] };
    });
  }

  async query(filter: CallFilter = {}): Promise<CallRecord[]> {
    this.#requireOpen();
    await this.#batch.flush();
    const { where, values } = callFilterSql(filter, PG_FILTER);
    let sql = `SELECT ${CALL_COLUMNS} FROM calls${where !== '' ? ` WHERE ${where}` : ''} ORDER BY started_at DESC, seq DESC`;
    if (filter.limit !== undefined) (values.push(Math.max(0, Math.floor(filter.limit))), (sql += ` LIMIT $${values.length}`));
    const result = await this.#run<CallRow>({ name: '', text: sql }, values);
    return result.rows.map(toCallRecord);
  }

  async get(id: string): Promise<CallRecord | undefined> {
    this.#requireOpen();
    await this.#batch.flush();
    const row = (await this.#run<CallRow>(SQL.getCall, [id])).rows[0];
    return row === undefined ? undefined : toCallRecord(row);
  }

  async putArtifact(bytes: Uint8Array, mimeType: string): Promise<StoredArtifact> {
    this.#requireOpen();
    if (bytes.byteLength > MAX_PG_ARTIFACT_BYTES) {
      throw new JournalError('artifact_too_large', `An artifact of ${bytes.byteLength} bytes is larger than the journal takes (${MAX_PG_ARTIFACT_BYTES}).`, {
        bytes: bytes.byteLength,
        limit: MAX_PG_ARTIFACT_BYTES,
      });
    }
    const now = Date.now();
    if (now - this.#lastSweepMs >= ARTIFACT_SWEEP_INTERVAL_MS) {
      this.#lastSweepMs = now;
      await this.#run(SQL.sweepArtifacts, [now]);
    }
    const sha256 = sha256Hex(bytes);
    await this.#run(SQL.putArtifact, [sha256, mimeType, bytes.byteLength, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), now, now + this.#artifactTtlMs]);
    return { sha256, uri: artifactUri(sha256), size: bytes.byteLength };
  }

  async getArtifact(sha256OrUri: string): Promise<{ mimeType: string; bytes: Uint8Array } | undefined> {
    this.#requireOpen();
    const sha256 = parseArtifactRef(sha256OrUri);
    if (sha256 === undefined) return undefined;
    const row = (await this.#run<{ mime_type: string; expires_at: number; bytes: Buffer }>(SQL.getArtifact, [sha256])).rows[0];
    if (row === undefined || row.expires_at <= Date.now()) return undefined;
    // Content addressing lets us prove the bytes are the ones stored.
    if (sha256Hex(row.bytes) !== sha256) {
      this.#logger.error({ sha256 }, 'artifact bytes do not match their hash; refusing to serve them');
      return undefined;
    }
    return { mimeType: row.mime_type, bytes: new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength) };
  }

  async createApproval(approval: NewApproval): Promise<ApprovalRecord> {
    this.#requireOpen();
    const a = approval;
    const json = approvalJsonColumns(a);
    return this.#chained(1, async (client) => {
      await this.#runOn(client, SQL.insertApproval, [
        a.id,
        a.tool,
        a.argsHash,
        a.sideEffect,
        a.rule,
        a.principal,
        a.sessionId,
        a.callId,
        a.createdAt,
        a.expiresAt,
        a.definitionDigest ?? null,
        json.arguments,
        json.effects,
        this.hostId,
      ]);
      const record = (await this.#getApproval(a.id, client)) as ApprovalRecord;
      return { value: record, facts: [approvalFact(record, APPROVAL_REV.created)] };
    });
  }

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    this.#requireOpen();
    return this.#getApproval(id);
  }

  async listApprovals(filter: { readonly pendingOnly?: boolean; readonly now?: number } = {}): Promise<ApprovalRecord[]> {
    this.#requireOpen();
    const result =
      filter.pendingOnly === true ? await this.#run<ApprovalRow>(SQL.listPendingApprovals, [filter.now ?? Date.now()]) : await this.#run<ApprovalRow>(SQL.listApprovals, []);
    return result.rows.map(toApprovalRecord);
  }

  async decideApproval(id: string, decision: ApprovalDecision, by: string, extras: DecisionExtras = {}): Promise<ApprovalRecord> {
    this.#requireOpen();
    const now = Date.now();
    return this.#chained(1, async (client) => {
      const result = await this.#runOn(client, SQL.decideApproval, [id, decision, by, now, extras.note ?? null, extras.via ?? 'cli']);
      const record = await this.#getApproval(id, client);
      if (result.rowCount !== 1) throw decideRefusal(id, record, now);
      return { value: record as ApprovalRecord, facts: [approvalFact(record as ApprovalRecord, APPROVAL_REV.decided)] };
    });
  }

  async takeRate(principal: string, windows: readonly RateCount[]): Promise<RateOutcome> {
    this.#requireOpen();
    try {
      return await this.#rates.take(principal, windows);
    } catch (error) {
      throw writeFailed(error, this.location);
    }
  }

  async spendApproval(id: string, tool: string, argsHash: string, callId: string, definitionDigest?: string): Promise<SpendOutcome> {
    this.#requireOpen();
    const now = Date.now();
    return this.#chained(1, async (client): Promise<{ value: SpendOutcome; facts: ChainFact[] }> => {
      const result = await this.#runOn(client, SQL.spendApproval, [id, tool, argsHash, callId, now, definitionDigest ?? null]);
      const record = await this.#getApproval(id, client);
      if (result.rowCount === 1) return { value: { ok: true, approval: record as ApprovalRecord }, facts: [approvalFact(record as ApprovalRecord, APPROVAL_REV.spent)] };
      return { value: { ok: false, reason: spendRefusalOf(record, tool, argsHash, now, definitionDigest), ...(record ? { approval: record } : {}) }, facts: [] };
    });
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    // Queued records first (nothing new is queued from here), while the host row and the pool still stand.
    await this.#batch.flush();
    clearInterval(this.#renewal);
    await this.#renewing;
    try {
      const hostId = this.hostId;
      if (hostId !== null) {
        // Its unfinished calls become interrupted, and the chain's final checkpoint signs where it ends.
        await this.#chained(
          0,
          async (client) => {
            const rows = (await this.#runOn<CallRowWithReplay>(client, SQL.interruptCallsOf, [hostId])).rows;
            await this.#runOn(client, SQL.endHost, [hostId, Date.now()]);
            return { value: undefined, facts: rows.map((row) => callFact(chainedCallOfRecord(toCallRecord(row), row.replay), CALL_REV.ended)) };
          },
          { final: true },
        );
      } else if (!this.chain.isNew && !this.chain.isFinal) {
        await this.#chained(0, async () => ({ value: undefined, facts: [] }), { final: true });
      }
    } catch (error) {
      this.#logger.error({ err: { message: (error as Error).message } }, 'journal: could not end the host row on close');
    } finally {
      await this.#pool.end().catch(() => undefined);
    }
  }

  async #getApproval(id: string, client?: pg.PoolClient): Promise<ApprovalRecord | undefined> {
    const row = (client === undefined ? await this.#run<ApprovalRow>(SQL.getApproval, [id]) : await this.#runOn<ApprovalRow>(client, SQL.getApproval, [id])).rows[0];
    return row === undefined ? undefined : toApprovalRecord(row);
  }

  // The renewal must not overlap itself, and a failure (database away) only logs: the next tick retries.
  async #renewAndSweep(): Promise<void> {
    if (this.#renewing !== undefined || this.#closed || this.hostId === null) return;
    const hostId: string = this.hostId;
    this.#renewing = (async () => {
      try {
        const renewed = await this.#run(SQL.renewLease, [hostId, this.leaseMs]);
        if (renewed.rowCount === 0) {
          // Another host found our lease expired (we could not renew for longer than it) and
          // interrupted our running calls. Later calls go under a new row, which a sweep can find.
          const id = randomUUID();
          await this.#chained(0, async (client) => {
            await this.#runOn(client, SQL.insertHost, [id, process.pid, hostname(), this.#sessionId, Date.now(), this.leaseMs]);
            return { value: undefined, facts: [] };
          });
          this.hostId = id;
          this.#logger.error(
            { lostHostId: hostId, hostId: id },
            'journal: this host lost its lease (another host found it expired) and its running calls were marked interrupted; continuing under a new host row',
          );
        }
        await this.expireLeases();
      } catch (error) {
        this.#logger.warn({ err: { message: (error as Error).message } }, 'journal: lease renewal failed; retrying');
      }
    })().finally(() => (this.#renewing = undefined));
    await this.#renewing;
  }

  async #connect(): Promise<pg.PoolClient> {
    try {
      return await this.#pool.connect();
    } catch (error) {
      throw writeFailed(error, this.location);
    }
  }

  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    let broken = false;
    try {
      await this.#runOn(client, { name: '', text: 'BEGIN' }, []);
      const value = await work(client);
      await this.#runOn(client, { name: '', text: 'COMMIT' }, []);
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async #run<R extends pg.QueryResultRow = pg.QueryResultRow>(statement: NamedStatement, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(toConfig(statement, values));
    } catch (error) {
      throw writeFailed(error, this.location);
    }
  }

  async #runOn<R extends pg.QueryResultRow = pg.QueryResultRow>(client: pg.PoolClient, statement: NamedStatement, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await client.query<R>(toConfig(statement, values));
    } catch (error) {
      throw writeFailed(error, this.location);
    }
  }

  #requireOpen(): void {
    if (this.#closed) throw new JournalError('journal_closed', 'The journal is closed.', {});
  }

  #requireHost(): string {
    this.#requireOpen();
    if (this.hostId === null) throw new JournalError('journal_read_only', 'This journal was opened for reading; it records no calls.', {});
    return this.hostId;
  }
}

// A write's own failure, decided in code (a refusal, a key that kept changing hands), not a failed
// statement: the transaction is still usable. Failed statements reach here through writeFailed, with a cause.
function isOwnFailure(error: unknown): boolean {
  return isJournalRefusal(error) || (error instanceof JournalError && error.cause === undefined);
}

const SAVEPOINT: NamedStatement = { name: '', text: 'SAVEPOINT toolhost_claim' };
const RELEASE_SAVEPOINT: NamedStatement = { name: '', text: 'RELEASE SAVEPOINT toolhost_claim' };
const ROLLBACK_TO_SAVEPOINT: NamedStatement = { name: '', text: 'ROLLBACK TO SAVEPOINT toolhost_claim' };

const PG_FILTER = { placeholder: (position: number) => `$${position}`, contains: (column: string, placeholder: string) => `strpos(${column}, ${placeholder}) > 0` };

function toConfig(statement: NamedStatement, values: unknown[]): pg.QueryConfig {
  return statement.name === '' ? { text: statement.text, values } : { name: statement.name, text: statement.text, values };
}

function pendingId(record: PendingRecord): string {
  return record.start.id;
}
