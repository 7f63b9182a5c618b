// Group commit: records of one event-loop turn are committed together, in one
// transaction (SQLite) or one statement (PostgreSQL), and each caller waits
// for that commit before it answers (SPEC section 5 step 10: no answer before
// its record). The batch is committed when the turn's I/O callbacks have run
// (setImmediate), so the calls that answer in the same turn share one commit;
// a batch that reaches RECORD_BATCH_MAX_RECORDS goes at once, and so does the
// record of a call that was the only one in flight (nothing would join it). Writes keep
// their order: the next batch starts after the one before it settled.
import type { Logger } from '../log.js';
import type { CallFinish, CallStart } from './call-record.js';

/** One call's record waiting for its batch, as start and finish. */
export interface PendingRecord {
  readonly start: CallStart;
  readonly finish: CallFinish;
}

/** The store's write of many records in one transaction (all or none). */
type WriteRecords<Item> = (records: readonly Item[]) => Promise<void> | void;

/** The call id of a queued record, for the log line of a batch that failed. */
type RecordId<Item> = (record: Item) => string;

/** A batch this large is committed at once, without waiting for the end of the turn. */
const RECORD_BATCH_MAX_RECORDS = 128;

interface Group<Item> {
  readonly items: Item[];
  readonly committed: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The queue of one store. `Item` is what the store keeps per record until the
 * commit: PostgreSQL the start and finish (PendingRecord), SQLite the row
 * itself (call-row.ts), built once when the call answers.
 */
export class RecordBatch<Item = PendingRecord> {
  #group: Group<Item> | undefined;
  #scheduled: NodeJS.Immediate | undefined;
  /** The write in progress (never rejects); the next one starts after it, so records land in order. */
  #writing: Promise<void> = Promise.resolve();
  #inFlight = 0;

  constructor(
    private readonly write: WriteRecords<Item>,
    private readonly idOf: RecordId<Item>,
    private readonly logger: Logger,
    private readonly maxRecords = RECORD_BATCH_MAX_RECORDS,
  ) {}

  /** How many records wait for their batch. */
  get pendingCount(): number {
    return this.#group?.items.length ?? 0;
  }

  /** True while a batch is being written. */
  get isWriting(): boolean {
    return this.#inFlight > 0;
  }

  /**
   * Queues a record; the promise (one per batch, shared by its records) resolves
   * once the batch is committed and rejects with the store's error when it is not.
   * `now`: nothing else will join the batch this turn (the caller's call is the only one
   * in flight), so it goes at once instead of at the end of the turn.
   */
  add(record: Item, now = false): Promise<void> {
    const group = (this.#group ??= newGroup<Item>());
    group.items.push(record);
    if (now || group.items.length >= this.maxRecords) void this.flush();
    else this.#scheduled ??= setImmediate(() => void this.flush());
    return group.committed;
  }

  /**
   * Commits everything queued so far; resolves once it is written or its failure
   * logged (never rejects). Reads of the journal flush first, so a host sees its own records.
   */
  flush(): Promise<void> {
    if (this.#scheduled !== undefined) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    const group = this.#group;
    if (group === undefined) return this.#writing;
    this.#group = undefined;
    this.#inFlight += 1;
    this.#writing = this.#writing.then(() => this.#commit(group)).finally(() => (this.#inFlight -= 1));
    return this.#writing;
  }

  async #commit(group: Group<Item>): Promise<void> {
    try {
      await this.write(group.items);
      group.resolve();
    } catch (error) {
      this.logger.error(
        { err: { message: (error as Error).message, code: (error as { code?: unknown }).code }, calls: group.items.map((record) => this.idOf(record)) },
        'journal: could not write a batch of read-only call records',
      );
      group.reject(error);
    }
  }
}

function newGroup<Item>(): Group<Item> {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const committed = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  // The callers hear of a failure; a record nobody waits for must not become an unhandled rejection.
  committed.catch(() => undefined);
  return { items: [], committed, resolve, reject };
}
