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
import { JournalError } from '../journal-error.js';
import type { BeginOutcome, Journal } from '../journal.js';
import { createPool, unreachable, writeFailed } from './pg-connection.js';
import { RecordBatch, type PendingRecord } from '../record-batch.js';
import { migratePostgres } from './pg-schema.js';
import { PostgresRates } from './pg-rates.js';
import type { RateCount, RateOutcome } from '../rate-store.js';
import { insertCallsText, SQL, type NamedStatement } from './pg-statements.js';

/** How long a host's lease lasts unless renewed; renewed every third of it. */
export const DEFAULT_LEASE_MS = 30_000;
/** The environment variable that sets the lease (tests make it short). */
export const LEASE_ENV = 'TOOLHOST_JOURNAL_LEASE_MS';
/** Largest artifact the database takes (bytes); results this large are refused, not truncated. */
export const MAX_PG_ARTIFACT_BYTES = 64 * 1024 * 1024;
const ARTIFACT_SWEEP_INTERVAL_MS = 10 * 60 * 1000;

export interface PostgresStoreOptions {
  logger?: Logger;
  sessionId?: string;
  /** false for readers (audit, reconcile, approvals): no host row, no lease. Default true. */
  asHost?: boolean;
  leaseMs?: number;
  artifactTtlMs?: number;
}

/** Connects, migrates (or refuses), registers this host's lease and recovers expired hosts' calls. */
export async function openPostgresStore(connectionString: string, display: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const logger = options.logger ?? createSilentLogger();
  const pool = createPool(connectionString);
  // An idle connection that breaks (server restart) must not crash the host: the pool replaces it.
  pool.on('error', (error) => logger.warn({ err: { message: error.message, code: (error as { code?: unknown }).code } }, 'journal: a PostgreSQL connection broke; reconnecting on the next query'));
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

export class PostgresStore implements Journal {
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
  /** Read-only calls' records, committed a few at a time in one statement. */
  readonly #batch: RecordBatch;
  readonly #rates: PostgresRates;
  #closing: Promise<void> | undefined;

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
    if (!Number.isFinite(this.#artifactTtlMs) || this.#artifactTtlMs <= 0) throw new RangeError(`artifactTtlMs must be a positive number of milliseconds, got ${this.#artifactTtlMs}`);
    this.#batch = new RecordBatch((records) => this.#recordMany(records), pendingId, logger);
  }

  /** Registers the host row and starts renewing its lease; recovers expired hosts either way. */
  async start(options: PostgresStoreOptions): Promise<void> {
    if (options.asHost !== false) {
      this.#sessionId = options.sessionId ?? null;
      const id = randomUUID();
      await this.#run(SQL.insertHost, [id, process.pid, hostname(), options.sessionId ?? null, Date.now(), this.leaseMs]);
      this.hostId = id;
      this.#renewal = setInterval(() => void this.#renewAndSweep(), Math.max(50, Math.floor(this.leaseMs / 3)));
      this.#renewal.unref();
    }
    await this.expireLeases();
  }

  /** Ends hosts whose lease ran out and marks their started calls interrupted; returns those call ids. */
  async expireLeases(): Promise<string[]> {
    const result = await this.#run<{ id: string; host_id: string }>(SQL.expireLeases, [Date.now()]);
    if (result.rows.length > 0) {
      this.#logger.warn({ calls: result.rows.map((row) => row.id), hosts: [...new Set(result.rows.map((row) => row.host_id))] }, 'journal: calls of hosts whose lease expired marked interrupted');
    }
    return result.rows.map((row) => row.id);
  }

  async begin(start: CallStart): Promise<BeginOutcome> {
    const hostId = this.#requireHost();
    const values = startedRowValues(start, hostId);
    if (start.idempotencyKey === null) {
      await this.#run(SQL.insertCall, values);
      return { kind: 'begun' };
    }
    // A holder can finish (and free the key) between the failed claim and the lookup: try again then.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await this.#transaction(async (client) => {
        await this.#runOn(client, SQL.insertCall, values);
        const claim = await this.#runOn<{ call_id: string }>(client, SQL.claimKey, [start.tool, start.idempotencyKey, start.id]);
        if (claim.rows[0]?.call_id === start.id) return true;
        throw ROLLBACK;
      }).catch((error: unknown) => (error === ROLLBACK ? false : Promise.reject(error)));
      if (claimed) return { kind: 'begun' };
      const holder = await this.findByIdempotencyKey(start.tool, start.idempotencyKey);
      if (holder !== undefined) return { kind: 'held', holder };
    }
    throw new JournalError('journal_write_failed', `The idempotency key of ${start.tool} kept changing hands; try the call again.`, { tool: start.tool });
  }

  async finish(id: string, finish: CallFinish): Promise<void> {
    this.#requireOpen();
    const result = await this.#run(SQL.finishCall, [id, finish.status, finish.errorCode, finish.resultHash, finish.resultBytes, finish.replay, finish.endedAt, finish.egressAdmitted ?? 0, finish.egressRefused ?? 0]);
    if (result.rowCount === 1) return;
    const existing = await this.get(id);
    if (existing === undefined) throw new JournalError('unknown_call', `No call ${id} in the journal.`, { id });
    this.#logger.error({ callId: id, status: existing.status, outcome: finish.status }, 'journal: finish on a call that is no longer started');
  }

  async record(start: CallStart, finish: CallFinish): Promise<void> {
    const hostId = this.#requireHost();
    await this.#run(SQL.insertCall, callRowValues(start, finish, hostId));
  }

  recordSoon(start: CallStart, finish: CallFinish): void {
    this.#requireHost();
    this.#batch.add({ start, finish });
  }

  flush(): Promise<void> {
    return this.#batch.flush();
  }

  // One multi-row INSERT: one round trip and one transaction for the whole batch.
  // The host id is read when the batch is written (a lost lease moves later calls to a new row).
  async #recordMany(records: readonly PendingRecord[]): Promise<void> {
    const hostId = this.hostId as string;
    await this.#run({ name: '', text: insertCallsText(records.length) }, records.flatMap(({ start, finish }) => callRowValues(start, finish, hostId)));
  }

  // Reads see this host's queued records: they flush first.
  async findByIdempotencyKey(tool: string, key: string): Promise<IdempotencyRecord | undefined> {
    this.#requireOpen();
    await this.#batch.flush();
    const result = await this.#run<{ id: string; status: IdempotencyRecord['status']; args_hash: string; replay: string | null; reconciliation: Reconciliation | null }>(SQL.findByKey, [tool, key]);
    const row = result.rows[0];
    return row === undefined ? undefined : { id: row.id, status: row.status, argsHash: row.args_hash, replay: row.replay, reconciliation: row.reconciliation };
  }

  async reconcile(id: string, action: Reconciliation): Promise<CallRecord> {
    this.#requireOpen();
    await this.#batch.flush();
    await this.expireLeases();
    return this.#transaction(async (client) => {
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
      await this.#runOn(client, SQL.reconcile, [id, action === 'skip' ? 'skipped' : 'interrupted', action, Date.now()]);
      const after = await this.#runOn<CallRow>(client, SQL.getCall, [id]);
      return toCallRecord(after.rows[0] as CallRow);
    });
  }

  async query(filter: CallFilter = {}): Promise<CallRecord[]> {
    this.#requireOpen();
    await this.#batch.flush();
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (sql: string, value: unknown) => (values.push(value), where.push(sql.replace('?', `$${values.length}`)));
    if (filter.tool !== undefined) add('tool = ?', filter.tool);
    if (filter.status !== undefined) add('status = ?', filter.status);
    if (filter.since !== undefined) add('started_at >= ?', filter.since);
    let sql = `SELECT ${CALL_COLUMNS} FROM calls${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at DESC, seq DESC`;
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
    await this.#run(SQL.insertApproval, [a.id, a.tool, a.argsHash, a.sideEffect, a.rule, a.principal, a.sessionId, a.callId, a.createdAt, a.expiresAt, a.definitionDigest ?? null, json.arguments, json.effects, this.hostId]);
    return (await this.#getApproval(a.id)) as ApprovalRecord;
  }

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    this.#requireOpen();
    return this.#getApproval(id);
  }

  async listApprovals(filter: { readonly pendingOnly?: boolean; readonly now?: number } = {}): Promise<ApprovalRecord[]> {
    this.#requireOpen();
    const result = filter.pendingOnly === true ? await this.#run<ApprovalRow>(SQL.listPendingApprovals, [filter.now ?? Date.now()]) : await this.#run<ApprovalRow>(SQL.listApprovals, []);
    return result.rows.map(toApprovalRecord);
  }

  async decideApproval(id: string, decision: ApprovalDecision, by: string, extras: DecisionExtras = {}): Promise<ApprovalRecord> {
    this.#requireOpen();
    const now = Date.now();
    const result = await this.#run(SQL.decideApproval, [id, decision, by, now, extras.note ?? null, extras.via ?? 'cli']);
    const record = await this.#getApproval(id);
    if (result.rowCount === 1) return record as ApprovalRecord;
    throw decideRefusal(id, record, now);
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
    const result = await this.#run(SQL.spendApproval, [id, tool, argsHash, callId, now, definitionDigest ?? null]);
    const record = await this.#getApproval(id);
    if (result.rowCount === 1) return { ok: true, approval: record as ApprovalRecord };
    return { ok: false, reason: spendRefusalOf(record, tool, argsHash, now, definitionDigest), ...(record ? { approval: record } : {}) };
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
        await this.#transaction(async (client) => {
          await this.#runOn(client, SQL.interruptCallsOf, [hostId]);
          await this.#runOn(client, SQL.endHost, [hostId, Date.now()]);
        });
      }
    } catch (error) {
      this.#logger.error({ err: { message: (error as Error).message } }, 'journal: could not end the host row on close');
    } finally {
      await this.#pool.end().catch(() => undefined);
    }
  }

  async #getApproval(id: string): Promise<ApprovalRecord | undefined> {
    const row = (await this.#run<ApprovalRow>(SQL.getApproval, [id])).rows[0];
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
          await this.#run(SQL.insertHost, [id, process.pid, hostname(), this.#sessionId, Date.now(), this.leaseMs]);
          this.hostId = id;
          this.#logger.error({ lostHostId: hostId, hostId: id }, 'journal: this host lost its lease (another host found it expired) and its running calls were marked interrupted; continuing under a new host row');
        }
        await this.expireLeases();
      } catch (error) {
        this.#logger.warn({ err: { message: (error as Error).message } }, 'journal: lease renewal failed; retrying');
      }
    })().finally(() => (this.#renewing = undefined));
    await this.#renewing;
  }

  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw writeFailed(error, this.location);
    }
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

const ROLLBACK = Symbol('rollback');

function toConfig(statement: NamedStatement, values: unknown[]): pg.QueryConfig {
  return statement.name === '' ? { text: statement.text, values } : { name: statement.name, text: statement.text, values };
}

function pendingId(record: PendingRecord): string {
  return record.start.id;
}
