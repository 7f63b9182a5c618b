// The embedded store behind the Journal interface: the synchronous SQLite
// journal, its file artifact store and its approvals, answered as promises.
// Behaviour is the SQLite journal's own (sqlite-journal.ts); this only adapts.
import { createSilentLogger, type Logger } from '../../log.js';
import type { StoredArtifact } from '../artifact-ref.js';
import type { ApprovalDecision, ApprovalRecord, DecisionExtras, NewApproval, SpendOutcome } from '../approval-record.js';
import type { CallFilter, CallFinish, CallRecord, CallStart, IdempotencyRecord, Reconciliation } from '../call-record.js';
import type { BeginOutcome, Journal } from '../journal.js';
import { JournalError } from '../journal-error.js';
import { callRowValues, type CallRowValues } from '../call-row.js';
import { RecordBatch } from '../record-batch.js';
import { SqliteApprovals } from './approvals.js';
import { SqliteRates } from './sqlite-rates.js';
import type { RateCount, RateOutcome } from '../rate-store.js';
import { ArtifactStore } from './artifacts.js';
import { RecordWriter } from './record-writer.js';
import { BUSY_TIMEOUT_MS } from './open-database.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { WalFrameCount } from './wal-frame-count.js';
import { WalIndex, type WalFrames } from './wal-index.js';
import { SqliteJournal, type JournalOptions } from './sqlite-journal.js';
import { entryRowValues } from '../chain/chain-entry.js';
import { INSERT_CALLS, INSERT_ENTRIES } from './journal-statements.js';
import type { JournalSnapshot } from '../chain/journal-snapshot.js';

interface SqliteStoreOptions extends JournalOptions {
  logger?: Logger;
  /** Artifact lifetime; default 24 hours. */
  artifactTtlMs?: number;
  /**
   * Commit read-only calls' batches, and checkpoint the WAL, on a writer thread of its own
   * (record-writer.ts), off the event loop: `serve`. Default false (a one-call CLI host would
   * only pay the thread's start).
   */
  writeBatchesOffThread?: boolean;
  /**
   * With writeBatchesOffThread: batches of at most this many records are committed on the
   * host's connection unless the WAL is due for a checkpoint. Default INLINE_BATCH_MAX; 0
   * sends every batch to the thread.
   */
  inlineBatchMax?: number;
  /** With writeBatchesOffThread: the frames in the WAL, not yet checkpointed, from which the checkpoint thread checkpoints it. Default WAL_CHECKPOINT_FRAMES. */
  checkpointWalFrames?: number;
}

/**
 * A batch of up to this many records (a call alone in its event-loop turn: every call of a
 * client that waits for each answer; or the few a worker thread answers together) is
 * committed on the host's connection: a few appends to the WAL, where sending it to the
 * thread costs its calls two thread wake-ups, about as much again, and the thread's arena
 * the garbage of each batch (the host's RSS grew 14 MB over 10,000 isolate calls with every
 * batch on the thread).
 */
const INLINE_BATCH_MAX = 4;

/**
 * When the WAL holds this many frames not yet checkpointed (SQLite's own automatic checkpoint
 * interval, about 4 MB), the checkpoint thread checkpoints it: the checkpoint (the WAL copied
 * into the database, two fsyncs) held the event loop for milliseconds on the host's connection,
 * and a batch's answers for as long on the writer thread.
 */
const WAL_CHECKPOINT_FRAMES = 1000;

/**
 * The WAL starts over (from the start of its file) only at a commit that finds every frame
 * checkpointed, and commits made while a checkpoint runs are left for the next one: under a
 * steady load it would never start over, and grow. From this many checkpoint intervals' frames,
 * the store waits for the checkpoint before it commits the next batch, which then starts the WAL
 * over (the file stays under WAL_FILE_KEPT_BYTES).
 */
const WAL_RESTART_INTERVALS = 3;

/**
 * The WAL file keeps its size when the WAL starts over after a checkpoint, up to this: a commit
 * then overwrites blocks the file has. Cut back to nothing at each restart (journal_size_limit 0),
 * every commit extended the file again, and the file system allocated (and, mounted with
 * `discard`, trimmed) its blocks anew: a read-only call's lone commit took ~15% longer at p50 and
 * ~30% on average. Four checkpoints' worth, so a WAL that grew while a reader held it back is cut.
 */
const WAL_FILE_KEPT_BYTES = 16 * 1024 * 1024;

/**
 * The host connection's automatic checkpoint (pages) while the thread checkpoints: only a
 * safety net, for a WAL the thread's batches do not keep short (no read-only calls).
 */
const HOST_AUTOCHECKPOINT_PAGES = 4000;

/** Opens the SQLite journal of a state folder (or `file`) behind the Journal interface. */
export function openSqliteStore(stateDir: string, options: SqliteStoreOptions = {}): SqliteStore {
  const journal = SqliteJournal.open(stateDir, options);
  try {
    return new SqliteStore(stateDir, journal, options);
  } catch (error) {
    journal.close();
    throw error;
  }
}

export class SqliteStore implements Journal {
  readonly kind = 'sqlite' as const;
  readonly #artifacts: ArtifactStore | undefined;
  readonly #approvals: SqliteApprovals;
  readonly #rates: SqliteRates;
  /**
   * Read-only calls' records, committed per event-loop turn in one transaction. Each is
   * queued as its row (call-row.ts), built once when the call answers: the commit
   * sends those rows (and their chain entries) to the writer thread as they are, or inserts them here.
   */
  readonly #batch: RecordBatch<CallRowValues>;
  /** The thread that commits the larger batches, when the store was opened with writeBatchesOffThread. */
  readonly #writer: RecordWriter | undefined;
  /** The thread that checkpoints the WAL, with the writer thread. */
  readonly #checkpointer: WalCheckpointer | undefined;
  readonly #inlineBatchMax: number;
  readonly #checkpointWalFrames: number;
  /** The wal-index, read for the WAL's frames not yet checkpointed (with the writer thread only). */
  readonly #walIndex: WalIndex | undefined;
  /** The WAL's frames before each batch committed here, counted between reads of the wal-index (with the writer thread only). */
  readonly #walCount: WalFrameCount | undefined;
  /** True from a checkpoint to the next batch after it: a checkpoint a reader held back is not asked for again at once. */
  #checkpointed = false;
  #closing: Promise<void> | undefined;

  constructor(
    readonly stateDir: string,
    /** The synchronous journal (tests of SQLite specifics reach through to it). */
    readonly sync: SqliteJournal,
    options: SqliteStoreOptions,
  ) {
    // Readers (audit, reconcile, approvals) never write artifact files.
    this.#artifacts =
      options.asHost === false
        ? undefined
        : new ArtifactStore(stateDir, sync, {
            ...(options.logger ? { logger: options.logger } : {}),
            ...(options.artifactTtlMs !== undefined ? { ttlMs: options.artifactTtlMs } : {}),
          });
    this.#approvals = new SqliteApprovals(() => sync);
    this.#rates = new SqliteRates(() => sync.database);
    const logger = options.logger ?? createSilentLogger();
    const offThread = options.writeBatchesOffThread === true && sync.hostId !== null;
    this.#writer = offThread ? new RecordWriter(sync.file, [INSERT_CALLS, INSERT_ENTRIES], WAL_FILE_KEPT_BYTES, HOST_AUTOCHECKPOINT_PAGES, logger) : undefined;
    this.#checkpointer = offThread ? new WalCheckpointer(sync.file, BUSY_TIMEOUT_MS, logger) : undefined;
    this.#inlineBatchMax = options.inlineBatchMax ?? INLINE_BATCH_MAX;
    this.#checkpointWalFrames = options.checkpointWalFrames ?? WAL_CHECKPOINT_FRAMES;
    if (this.#writer !== undefined) {
      sync.database.pragma(`journal_size_limit = ${WAL_FILE_KEPT_BYTES}`);
      sync.database.pragma(`wal_autocheckpoint = ${HOST_AUTOCHECKPOINT_PAGES}`);
      this.#walIndex = new WalIndex(sync.file);
      this.#walCount = new WalFrameCount(this.#walIndex, sync.database, this.#checkpointWalFrames, this.#inlineBatchMax);
    }
    this.#batch = new RecordBatch<CallRowValues>((rows) => this.#writeBatch(rows), rowId, logger);
  }

  get location(): string {
    return `sqlite:${this.sync.file}`;
  }

  get hostId(): string | null {
    return this.sync.hostId;
  }

  // A write on the host's connection chains after the batch the writer thread is committing: it waits for it.
  async begin(start: CallStart): Promise<BeginOutcome> {
    if (this.#batch.isWriting) await this.#batch.flush();
    return this.sync.begin(start);
  }

  async finish(id: string, finish: CallFinish): Promise<void> {
    if (this.#batch.isWriting) await this.#batch.flush();
    this.sync.finish(id, finish);
  }

  async record(start: CallStart, finish: CallFinish): Promise<void> {
    if (this.#batch.isWriting) await this.#batch.flush();
    this.sync.record(start, finish);
  }

  recordSoon(start: CallStart, finish: CallFinish, alone = false): Promise<void> {
    if (this.#closing !== undefined) throw new JournalError('journal_closed', 'The journal is closed.', {});
    return this.#batch.add(callRowValues(start, finish, this.sync.requireHost()), alone);
  }

  async readSnapshot(): Promise<JournalSnapshot> {
    await this.#batch.flush();
    return this.sync.readSnapshot();
  }

  flush(): Promise<void> {
    return this.#batch.flush();
  }

  // Reads see this host's queued records: they flush first.
  async findByIdempotencyKey(tool: string, key: string): Promise<IdempotencyRecord | undefined> {
    await this.#batch.flush();
    return this.sync.findByIdempotencyKey(tool, key);
  }

  async reconcile(id: string, action: Reconciliation): Promise<CallRecord> {
    await this.#batch.flush();
    return this.sync.reconcile(id, action);
  }

  async query(filter?: CallFilter): Promise<CallRecord[]> {
    await this.#batch.flush();
    return this.sync.query(filter);
  }

  async get(id: string): Promise<CallRecord | undefined> {
    await this.#batch.flush();
    return this.sync.get(id);
  }

  async putArtifact(bytes: Uint8Array, mimeType: string): Promise<StoredArtifact> {
    return this.#requireArtifacts().put(bytes, mimeType);
  }

  async getArtifact(sha256OrUri: string): Promise<{ mimeType: string; bytes: Uint8Array } | undefined> {
    return this.#requireArtifacts().get(sha256OrUri);
  }

  /** The file artifact store (tests of SQLite specifics). */
  get artifacts(): ArtifactStore {
    return this.#requireArtifacts();
  }

  async createApproval(approval: NewApproval): Promise<ApprovalRecord> {
    if (this.#batch.isWriting) await this.#batch.flush();
    return this.#approvals.create(approval, this.hostId);
  }

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    return this.#approvals.get(id);
  }

  async listApprovals(filter: { readonly pendingOnly?: boolean; readonly now?: number } = {}): Promise<ApprovalRecord[]> {
    return this.#approvals.list(filter.pendingOnly === true, filter.now);
  }

  async decideApproval(id: string, decision: ApprovalDecision, by: string, extras?: DecisionExtras): Promise<ApprovalRecord> {
    if (this.#batch.isWriting) await this.#batch.flush();
    return this.#approvals.decide(id, decision, by, extras);
  }

  async spendApproval(id: string, tool: string, argsHash: string, callId: string, definitionDigest?: string): Promise<SpendOutcome> {
    if (this.#batch.isWriting) await this.#batch.flush();
    return this.#approvals.spend(id, tool, argsHash, callId, definitionDigest);
  }

  async takeRate(principal: string, windows: readonly RateCount[]): Promise<RateOutcome> {
    return this.#rates.take(principal, windows);
  }

  /** The WAL's frames not yet checkpointed, as the store reads them (tests of SQLite specifics); undefined without the writer thread. */
  pendingWalFrames(): number | undefined {
    return this.#walIndex?.pendingFrames();
  }

  /** The checkpoint thread, if any (tests of SQLite specifics). */
  get walCheckpointer(): WalCheckpointer | undefined {
    return this.#checkpointer;
  }

  /** The writer thread of the batches, if any (tests of SQLite specifics). */
  get recordWriter(): RecordWriter | undefined {
    return this.#writer;
  }

  close(): Promise<void> {
    this.#walCount?.close();
    this.#closing ??= this.#batch
      .flush()
      .then(async () => {
        await Promise.all([this.#writer?.close(), this.#checkpointer?.close()]);
      })
      .finally(() => this.sync.close());
    return this.#closing;
  }

  // A small batch on the host's connection, the others on the writer thread. A small batch with
  // no checkpoint due is committed at once, in this turn (no promise): its calls' answers wait for it.
  #writeBatch(rows: readonly CallRowValues[]): Promise<void> | void {
    const writer = this.#writer;
    const count = this.#walCount;
    if (writer === undefined || count === undefined) return this.sync.recordRows(rows);
    const wal = count.beforeBatch();
    if (rows.length <= this.#inlineBatchMax && (wal === undefined || wal.pending < this.#checkpointWalFrames)) {
      this.#checkpointed = false;
      return this.#writeHere(rows, count);
    }
    return this.#writeChecked(writer, count, rows, wal);
  }

  /** A batch committed on the host's connection; the WAL's frames for the next one are counted, or read after its answers. */
  #writeHere(rows: readonly CallRowValues[], count: WalFrameCount): void {
    this.sync.recordRows(rows);
    count.afterBatch(rows.length);
  }

  // The entries are prepared here (the chain's head is this thread's), committed by the writer thread with the rows.
  // The thread's batch is another connection's write: the next batch committed here reads the wal-index.
  async #writeChecked(writer: RecordWriter, count: WalFrameCount, rows: readonly CallRowValues[], wal: WalFrames | undefined): Promise<void> {
    count.invalidate();
    const checkpoint = await this.#checkpointIfDue(wal);
    if (!checkpoint && rows.length <= this.#inlineBatchMax) return this.#writeHere(rows, count);
    const prepared = this.sync.prepareRows(rows);
    if (prepared === undefined) return this.sync.recordRows(rows);
    const entries = prepared.entries.map(entryRowValues);
    try {
      await writer.write([rows, entries], () => this.sync.insertPrepared(rows, entries), checkpoint);
    } catch (error) {
      this.sync.settleRows(prepared, rows.length, error);
      throw error;
    }
    this.sync.settleRows(prepared, rows.length);
  }

  /**
   * Starts a checkpoint on the checkpoint thread when the WAL is due for one, and waits for it
   * only when the WAL must start over (WAL_RESTART_INTERVALS): then no write of this host runs
   * beside it, and the batch's commit starts the WAL over. True when the batch must carry the
   * checkpoint to the writer thread instead: the checkpoint thread is gone.
   */
  async #checkpointIfDue(wal: WalFrames | undefined): Promise<boolean> {
    if (wal === undefined || wal.pending < this.#checkpointWalFrames) {
      this.#checkpointed = false;
      return false;
    }
    const restart = wal.total >= this.#checkpointWalFrames * WAL_RESTART_INTERVALS;
    if (this.#checkpointer?.isRunning === true) {
      if (!restart) return false;
      // Batches were committed beside it: another checkpoint, with none, follows.
      await this.#checkpointer.idle();
    } else if (this.#checkpointed) {
      this.#checkpointed = false;
      return false;
    }
    this.#checkpointed = true;
    if (this.#checkpointer?.isAvailable !== true) return true;
    const done = this.#checkpointer.checkpoint();
    if (restart) await done;
    return false;
  }

  #requireArtifacts(): ArtifactStore {
    if (this.#artifacts === undefined) throw new Error('this journal was opened for reading: it stores no artifacts');
    return this.#artifacts;
  }
}

function rowId(row: CallRowValues): string {
  return row[0] as string;
}
