// The SQLite store's writer of read-only calls' batches (record-batch.ts), and of
// the WAL's checkpoints when the checkpoint thread is gone (wal-checkpointer.ts), on a thread of its own (record-writer-thread.mjs, its
// own connection to the same WAL file): a commit of many records holds the
// host's event loop for SQLite's work and the file writes, and a checkpoint (a
// copy of the WAL and two fsyncs) for milliseconds. The store keeps a batch of
// up to four records on its own connection (sqlite-store.ts). Nothing is lost to
// the thread: a batch it fails to commit is logged as a failed write always
// was, and when the thread itself dies its pending batches, and every later
// one, are written on the host's own connection instead.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log.js';
import { BUSY_TIMEOUT_MS, PAGE_CACHE_KIB } from './open-database.js';

const THREAD_URL = new URL('./record-writer-thread.mjs', import.meta.url);

/** How long close() waits for the thread to finish its last batch before terminating it. */
const CLOSE_GRACE_MS = 10_000;

/** An INSERT the thread can repeat for many rows: `head` then `row` once per row, comma-separated; `arity` values a row. */
export interface MultiRowInsert {
  readonly head: string;
  readonly row: string;
  readonly arity: number;
}

interface PendingWrite {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
  /** The same batch written on the host's connection, should the thread die first. */
  readonly fallback: () => void;
}

export class RecordWriter {
  readonly #thread: Worker;
  readonly #pending = new Map<number, PendingWrite>();
  readonly #logger: Logger;
  #nextId = 1;
  #dead = false;
  #closed = false;
  #committed = 0;

  /**
   * Starts the thread on the journal `file` (already created and migrated by the host's connection); `inserts` per table;
   * `walFileKeptBytes` its connection's journal_size_limit, as the host's; `autocheckpointPages` its
   * connection's wal_autocheckpoint (the store asks for checkpoints itself: this is only the safety net).
   */
  constructor(file: string, inserts: readonly MultiRowInsert[], walFileKeptBytes: number, autocheckpointPages: number, logger: Logger) {
    this.#logger = logger;
    this.#thread = new Worker(THREAD_URL, {
      workerData: { file, busyTimeoutMs: BUSY_TIMEOUT_MS, pageCacheKib: PAGE_CACHE_KIB, inserts, walFileKeptBytes, autocheckpointPages },
      // Rows are small and a batch is at most RECORD_BATCH_MAX_RECORDS of them.
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    // Idle, it must not keep a finished host alive; a pending batch refs it (write()).
    this.#thread.unref();
    this.#thread.on('message', (message: { id?: number; ok?: boolean; message?: string; code?: string }) => this.#answered(message));
    this.#thread.on('error', (error) => this.#died(error));
    this.#thread.on('exit', (code) => this.#died(new Error(`the journal writer thread exited with code ${code}`)));
  }

  /** Batches the thread has committed (tests: proof the thread, not the host, wrote them). */
  get committedBatches(): number {
    return this.#committed;
  }

  /** The thread itself (tests: to stop it as a crash would). */
  get thread(): Worker {
    return this.#thread;
  }

  /**
   * Commits the rows of every table in one transaction on the thread, then, with `checkpoint`,
   * checkpoints the WAL; `fallback` writes the same batch on the host's connection.
   */
  write(tables: readonly (readonly (readonly unknown[])[])[], fallback: () => void, checkpoint = false): Promise<void> {
    if (this.#dead || this.#closed) {
      fallback();
      return Promise.resolve();
    }
    const id = this.#nextId++;
    return new Promise<void>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, fallback });
      if (this.#pending.size === 1) this.#thread.ref();
      this.#thread.postMessage({ id, tables, checkpoint });
    });
  }

  /** Waits for the batches sent so far, then stops the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#dead) return;
    const exited = new Promise<void>((resolve) => this.#thread.once('exit', () => resolve()));
    this.#thread.ref();
    this.#thread.postMessage({ type: 'close' });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)));
    await Promise.race([exited, late]);
    clearTimeout(timer);
    if (!this.#dead) await this.#thread.terminate();
  }

  #answered(message: { id?: number; ok?: boolean; message?: string; code?: string }): void {
    if (message.id === undefined) return; // `ready`
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#settle(message.id);
    if (message.ok === true) {
      this.#committed++;
      pending.resolve();
    } else {
      pending.reject(Object.assign(new Error(message.message ?? 'the journal writer thread could not commit a batch'), { code: message.code }));
    }
  }

  // The thread is gone (a crash, or close()): what it had not answered is written here.
  #died(error: Error): void {
    if (this.#dead) return;
    this.#dead = true;
    if (!this.#closed || this.#pending.size > 0)
      this.#logger.warn({ err: error.message, pending: this.#pending.size }, 'journal writer thread stopped: batches are written on the host thread');
    for (const [id, pending] of [...this.#pending]) {
      this.#settle(id);
      try {
        pending.fallback();
        pending.resolve();
      } catch (fallbackError) {
        pending.reject(fallbackError as Error);
      }
    }
  }

  #settle(id: number): void {
    this.#pending.delete(id);
    if (this.#pending.size === 0 && !this.#dead) this.#thread.unref();
  }
}
