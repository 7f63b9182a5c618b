// The journal WAL's checkpoints, on a thread of their own (wal-checkpoint-thread.mjs,
// its own connection to the same file). A checkpoint copies the WAL into the
// database and fsyncs both: about 18 ms for the 1000 frames of 65 batches of 8
// read-only records on the bench machine, most of it waiting for the disk. Run
// by the writer thread with a batch, it held that batch's answers, and the
// batches queued behind it, for as long; here the writer thread and the host's
// connection keep committing while it runs. The store decides when (sqlite-store.ts).
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log.js';
import { PAGE_CACHE_KIB } from './open-database.js';

/** How long close() waits for a checkpoint in progress before terminating the thread. */
const CLOSE_GRACE_MS = 10_000;

export class WalCheckpointer {
  readonly #thread: Worker;
  readonly #logger: Logger;
  /** The checkpoint in progress: resolves when the thread answers or dies (never rejects). */
  #running: { readonly done: Promise<void>; readonly settle: () => void } | undefined;
  #dead = false;
  #closed = false;
  #completed = 0;

  /** Starts the thread on the journal `file` (already created and in WAL mode). */
  constructor(file: string, busyTimeoutMs: number, logger: Logger) {
    this.#logger = logger;
    this.#thread = new Worker(new URL('./wal-checkpoint-thread.mjs', import.meta.url), {
      workerData: { file, busyTimeoutMs, pageCacheKib: PAGE_CACHE_KIB },
      resourceLimits: { maxOldGenerationSizeMb: 16 },
    });
    // Idle, it must not keep a finished host alive; a checkpoint in progress refs it.
    this.#thread.unref();
    this.#thread.on('message', (message: { ok?: boolean; message?: string; code?: string }) => {
      if (message.ok === true) this.#completed++;
      else this.#logger.warn({ err: { message: message.message, code: message.code } }, 'journal: the WAL checkpoint failed; the next one copies what it left');
      this.#settle();
    });
    this.#thread.on('error', (error) => this.#died(error));
    this.#thread.on('exit', (code) => this.#died(new Error(`the journal checkpoint thread exited with code ${code}`)));
  }

  /** False once the thread is gone: the writer thread checkpoints with its batches again. */
  get isAvailable(): boolean {
    return !this.#dead && !this.#closed;
  }

  /** True while a checkpoint runs. */
  get isRunning(): boolean {
    return this.#running !== undefined;
  }

  /** Checkpoints completed (tests). */
  get completedCheckpoints(): number {
    return this.#completed;
  }

  /** The thread itself (tests: to stop it as a crash would). */
  get thread(): Worker {
    return this.#thread;
  }

  /** Starts a checkpoint unless one runs; resolves when the one in progress is over (never rejects). */
  checkpoint(): Promise<void> {
    if (this.#running !== undefined) return this.#running.done;
    if (!this.isAvailable) return Promise.resolve();
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    this.#running = { done, settle };
    this.#thread.ref();
    this.#thread.postMessage({ type: 'checkpoint' });
    return done;
  }

  /** Resolves when no checkpoint runs. */
  idle(): Promise<void> {
    return this.#running?.done ?? Promise.resolve();
  }

  /** Waits for the checkpoint in progress, then stops the thread. */
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

  #settle(): void {
    const running = this.#running;
    this.#running = undefined;
    if (!this.#dead) this.#thread.unref();
    running?.settle();
  }

  // A checkpoint lost with the thread loses nothing: the frames stay in the WAL for the next one.
  #died(error: Error): void {
    if (this.#dead) return;
    this.#dead = true;
    if (!this.#closed) this.#logger.warn({ err: error.message }, 'journal checkpoint thread stopped: the writer thread checkpoints the WAL');
    this.#settle();
  }
}
