// The live feed's event stream (server-sent events): one poll of the journal
// per interval while anyone listens, shared by every listener, sending the
// calls that are new or changed since the last poll. Polling the journal
// (rather than hearing the supervisor) shows the calls of every host of a
// fleet journal, and works the same inside `serve` and in `toolhost console`.
import type { ServerResponse } from 'node:http';
import type { CallRecord } from '../audit/call-record.js';
import type { Logger } from '../log.js';
import { feedRow, type ApprovalsByCall, type FeedRow } from './views/calls-view.js';
import { SECURITY_HEADERS } from './security.js';

/** Calls each poll reads (the newest). */
const FEED_WINDOW = 100;
/** Listeners at once; more get 503. */
const MAX_FEED_LISTENERS = 32;
const KEEPALIVE_MS = 15_000;

interface FeedSource {
  /** The newest calls, newest first, and the operator approvals that let calls run. */
  read(limit: number): Promise<{ readonly records: readonly CallRecord[]; readonly approvals: ApprovalsByCall }>;
}

export class FeedHub {
  readonly #listeners = new Set<ServerResponse>();
  /** What each call looked like at the last poll, to send only changes. */
  #seen = new Map<string, string>();
  #latest: FeedRow[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** The poll running now, if any; a new listener waits for it. */
  #inflight: Promise<void> | undefined;
  /** A poll is running or due: the loop is alive. */
  #looping = false;
  #lastWriteMs = 0;
  #closed = false;

  constructor(
    private readonly source: FeedSource,
    private readonly options: { readonly base: string; readonly intervalMs: number; readonly logger: Logger; readonly now: () => number },
  ) {}

  /** Starts an event stream on `res`; false (and 503) when too many listen already. */
  async listen(res: ServerResponse): Promise<boolean> {
    if (this.#closed || this.#listeners.size >= MAX_FEED_LISTENERS) {
      res.writeHead(503, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'retry-after': '10' });
      res.end('Too many live feeds are open; try again later.\n');
      return false;
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write('retry: 3000\n\n');
    this.#listeners.add(res);
    res.on('close', () => this.#listeners.delete(res));
    if (!this.#looping) {
      this.#looping = true;
      this.#inflight = this.#poll();
    }
    await this.#inflight;
    // The newest calls at once, oldest first (the page puts each on top): a reconnect misses nothing.
    for (const row of [...this.#latest].reverse()) this.#send(res, row);
    return true;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const res of this.#listeners) res.end();
    this.#listeners.clear();
  }

  async #poll(): Promise<void> {
    this.#timer = undefined;
    try {
      const { records, approvals } = await this.source.read(FEED_WINDOW);
      const rows = records.map((record) => feedRow(this.options.base, record, approvals));
      const seen = new Map<string, string>();
      const changed: FeedRow[] = [];
      for (const row of rows) {
        const key = row.cells.join('\u0000');
        seen.set(row.id, key);
        if (this.#seen.get(row.id) !== key) changed.push(row);
      }
      const first = this.#seen.size === 0;
      this.#seen = seen;
      this.#latest = rows;
      if (!first) for (const row of changed.reverse()) for (const res of this.#listeners) this.#send(res, row);
      if (this.options.now() - this.#lastWriteMs > KEEPALIVE_MS) for (const res of this.#listeners) this.#write(res, ': keep-alive\n\n');
    } catch (error) {
      this.options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'console feed: the journal did not answer');
    }
    this.#inflight = undefined;
    if (this.#closed || this.#listeners.size === 0) {
      // Nobody listens: the loop stops, and the next listener starts from a fresh view.
      this.#looping = false;
      this.#seen = new Map();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#inflight = this.#poll();
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  #send(res: ServerResponse, row: FeedRow): void {
    // JSON holds no raw newline, so one data line carries the whole event.
    this.#write(res, `event: call\ndata: ${JSON.stringify(row)}\n\n`);
  }

  #write(res: ServerResponse, text: string): void {
    this.#lastWriteMs = this.options.now();
    if (!res.writableEnded) res.write(text);
  }
}
