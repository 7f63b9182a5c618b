// Rate windows in the SQLite journal: one IMMEDIATE transaction counts the
// call in every window (an upsert that raises the count only below the limit)
// or rolls back when one is full, so concurrent hosts on one journal file
// never count past a limit. Windows are fixed and aligned to the host's clock.
import type Database from 'better-sqlite3';
import { RATE_SWEEP_INTERVAL_MS, type RateCount, type RateOutcome } from '../rate-store.js';

class WindowFull extends Error {
  constructor(
    readonly index: number,
    readonly retryAfterMs: number,
  ) {
    super('rate window full');
  }
}

/** The rate windows of one SQLite journal. */
export class SqliteRates {
  #lastSweepMs = 0;

  constructor(
    private readonly db: () => Database.Database,
    private readonly now: () => number = Date.now,
  ) {}

  take(principal: string, windows: readonly RateCount[]): RateOutcome {
    const db = this.db();
    const nowMs = this.now();
    const count = db.prepare(
      `INSERT INTO rate_windows (principal, window_key, window_start, calls, expires_at) VALUES (@principal, @key, @start, 1, @end)
       ON CONFLICT (principal, window_key, window_start) DO UPDATE SET calls = calls + 1 WHERE calls < @limit
       RETURNING calls`,
    );
    try {
      db.transaction(() => {
        windows.forEach((window, index) => {
          const start = Math.floor(nowMs / window.perMs) * window.perMs;
          const row = count.get({ principal, key: window.key, start, end: start + window.perMs, limit: window.calls });
          if (row === undefined) throw new WindowFull(index, start + window.perMs - nowMs);
        });
      }).immediate();
    } catch (error) {
      if (error instanceof WindowFull) return { ok: false, index: error.index, retryAfterMs: error.retryAfterMs };
      throw error;
    }
    if (nowMs - this.#lastSweepMs > RATE_SWEEP_INTERVAL_MS) {
      this.#lastSweepMs = nowMs;
      db.prepare('DELETE FROM rate_windows WHERE expires_at <= ?').run(nowMs);
    }
    return { ok: true };
  }
}
