// How many frames the journal's WAL holds, for the store's question before each
// batch committed on the host's connection: is a checkpoint due? Reading the
// wal-index answers it (wal-index.ts) but is a system call, one per call when
// each call's batch commits alone. So each batch's frames are counted (no fewer
// than it writes) onto the last reading, and the wal-index is read again when
// the count nears a checkpoint, every WAL_READ_EVERY_BATCHES batches (another
// host's commits are seen no sooner), after a batch of another connection of
// this host (the writer thread: invalidate()), and after any other write of
// this connection. That last is not left to each write method to report (one
// added later without it would leave the count low and the checkpoint late):
// the count is trusted only while the connection's total_changes(), a counter
// in memory (no system call), is what it was when the count was last made.
// total_changes() counts rows inserted, updated or deleted: a write of no rows
// (a schema change) is not seen, and the host makes none once it is open.
import type Database from 'better-sqlite3';
import type { WalFrames, WalIndex } from './wal-index.js';

/**
 * Frames a batch committed on the host's connection is taken to add to the WAL, for a batch of
 * `rows` records: WAL_BATCH_FRAMES + rows * WAL_ROW_FRAMES, no less than it writes (a read-only
 * call's record and its chain entry write 6 to 8 pages alone, up to 12 when pages split; four of
 * them about 12).
 */
const WAL_BATCH_FRAMES = 8;
const WAL_ROW_FRAMES = 4;

/**
 * The wal-index is read at least once every this many batches committed on the host's connection:
 * what the count leaves out (another host's commits, a record larger than the count allows) is
 * seen that late at most.
 */
const WAL_READ_EVERY_BATCHES = 16;

export class WalFrameCount {
  readonly #index: WalIndex;
  readonly #totalChanges: Database.Statement;
  readonly #checkpointFrames: number;
  readonly #batchMaxRows: number;
  /**
   * The WAL's frames after the last batch committed on this connection: read once its answers
   * were on their way (readSoon), or counted; the next batch takes it instead of reading the
   * wal-index itself. Undefined when neither happened since the last batch.
   */
  #afterCommit: WalFrames | undefined;
  #readSoon: NodeJS.Immediate | undefined;
  /** The WAL's frames as last read, plus the count of each batch committed here since; undefined once another connection wrote. */
  #counted: WalFrames | undefined;
  /** The connection's total_changes() when #counted was read or last counted. */
  #countedAtChanges = -1;
  /** Batches committed here since the wal-index was last read. */
  #batchesUnread = 0;
  #closed = false;

  /**
   * Counts the frames that batches of at most `batchMaxRows` records committed on `database`
   * add to the WAL `index` reads, until `checkpointFrames` come within a batch.
   */
  constructor(index: WalIndex, database: Database.Database, checkpointFrames: number, batchMaxRows: number) {
    this.#index = index;
    this.#totalChanges = database.prepare('SELECT total_changes()').pluck();
    this.#checkpointFrames = checkpointFrames;
    this.#batchMaxRows = batchMaxRows;
  }

  /**
   * The WAL's frames for the batch about to be committed: as read or counted after the last
   * batch, else read now. A lone call's commit reads the wal-index after its answer is on its
   * way, not before it: what other writes added since that read counts at the next batch. Taken
   * once: each reading is used by one batch.
   */
  beforeBatch(): WalFrames | undefined {
    const taken = this.#afterCommit;
    this.#afterCommit = undefined;
    // A write of this connection since the last count: the batch after this one reads the wal-index again.
    if (this.#counted !== undefined && this.#changes() !== this.#countedAtChanges) this.#counted = undefined;
    return taken ?? this.#read();
  }

  /**
   * After a batch of `rows` records committed on this connection: adds its frames to the count
   * when that leaves the next batch (however many records it has) short of a checkpoint and the
   * wal-index was read within WAL_READ_EVERY_BATCHES; else reads the wal-index once the batch's
   * answers are written (their callbacks run first).
   */
  afterBatch(rows: number): void {
    const counted = this.#counted;
    if (counted !== undefined && this.#batchesUnread + 1 < WAL_READ_EVERY_BATCHES) {
      const added = WAL_BATCH_FRAMES + rows * WAL_ROW_FRAMES;
      const next = { total: counted.total + added, pending: counted.pending + added };
      if (next.pending + WAL_BATCH_FRAMES + this.#batchMaxRows * WAL_ROW_FRAMES < this.#checkpointFrames) {
        this.#batchesUnread++;
        this.#counted = this.#afterCommit = next;
        this.#countedAtChanges = this.#changes();
        return;
      }
    }
    if (this.#closed) return;
    this.#readSoon ??= setImmediate(() => {
      this.#readSoon = undefined;
      this.#afterCommit = this.#read();
    });
  }

  /** Another connection of this host wrote to the WAL (the writer thread's batch): the next batch's commit reads the wal-index again. */
  invalidate(): void {
    this.#counted = undefined;
  }

  /** Stops reading the wal-index after batches (the store is closing). */
  close(): void {
    this.#closed = true;
    if (this.#readSoon !== undefined) clearImmediate(this.#readSoon);
    this.#readSoon = undefined;
  }

  /** Reads the wal-index; the count of the batches committed here starts again from it. */
  #read(): WalFrames | undefined {
    this.#batchesUnread = 0;
    this.#countedAtChanges = this.#changes();
    return (this.#counted = this.#index.frames());
  }

  #changes(): number {
    return this.#totalChanges.get() as number;
  }
}
