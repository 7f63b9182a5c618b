// Read-only calls' one-shot records, committed together (one transaction for
// many records) a few milliseconds after their answers were given, instead of
// one write per call on the call path. Both stores use it behind
// Journal.recordSoon: the store supplies the one-transaction write, this keeps
// the queue, the timer and the order. A crash of the host loses the records of
// the last few milliseconds (never a write-ahead record: those are not
// batched); flush() and the stores' close() write everything pending first.
import type { Logger } from '../log.js';
import type { CallFinish, CallStart } from './call-record.js';

/** One call's record waiting for its batch, as start and finish. */
export interface PendingRecord {
  readonly start: CallStart;
  readonly finish: CallFinish;
}

/** The store's write of many records in one transaction (all or none). */
export type WriteRecords<Item> = (records: readonly Item[]) => Promise<void> | void;

/** The call id of a queued record, for the log line of a batch that failed. */
export type RecordId<Item> = (record: Item) => string;

/**
 * How long a record may wait for others before its batch is committed (ms). 10, not
 * 3: with 8 calls in flight a batch then carries three times the records, and each
 * commit (a wake-up of the SQLite writer thread, a PostgreSQL statement) is paid a
 * third as often (8 in flight, interleaved A/B: the host's CPU per call about 15%
 * lower); a crash loses at most the read-only records of these last milliseconds.
 */
export const RECORD_BATCH_DELAY_MS = 10;
/** A batch this large is committed at once, without waiting for the delay. */
export const RECORD_BATCH_MAX_RECORDS = 128;

/**
 * The queue of one store. `Item` is what the store keeps per record until the
 * commit: PostgreSQL the start and finish (PendingRecord), SQLite the row
 * itself (call-row.ts), built once when the call answers.
 */
export class RecordBatch<Item = PendingRecord> {
  #pending: Item[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** The write in progress; the next one starts after it, so records land in order. */
  #writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: WriteRecords<Item>,
    private readonly idOf: RecordId<Item>,
    private readonly logger: Logger,
    private readonly delayMs = RECORD_BATCH_DELAY_MS,
    private readonly maxRecords = RECORD_BATCH_MAX_RECORDS,
  ) {}

  /** How many records wait for their batch. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /** Queues a record; its batch is committed within `delayMs` (or at once when full). */
  add(record: Item): void {
    this.#pending.push(record);
    if (this.#pending.length >= this.maxRecords) {
      void this.flush();
      return;
    }
    // Referenced on purpose: a process with nothing else to do still commits the batch before it exits.
    this.#timer ??= setTimeout(() => void this.flush(), this.delayMs);
  }

  /**
   * Commits everything queued so far; resolves once it is written (or its
   * failure logged). Reads of the journal flush first, so a host sees its own records.
   */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0) return this.#writing;
    const records = this.#pending;
    this.#pending = [];
    this.#writing = this.#writing.then(() => this.#commit(records));
    return this.#writing;
  }

  async #commit(records: readonly Item[]): Promise<void> {
    try {
      await this.write(records);
    } catch (error) {
      // As a failed one-shot record always was: logged with the calls it names, the answers already given.
      this.logger.error(
        { err: { message: (error as Error).message, code: (error as { code?: unknown }).code }, calls: records.map((record) => this.idOf(record)) },
        'journal: could not write a batch of read-only call records',
      );
    }
  }
}
