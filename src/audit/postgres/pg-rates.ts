// Rate windows in the PostgreSQL journal, shared by every host of a fleet:
// one transaction counts the call in every window (an upsert that raises the
// count only below the limit, atomic under concurrent hosts) or rolls back
// when one is full. Window starts come from the database's clock, so hosts
// whose clocks differ still agree on which window a call falls in.
import type pg from 'pg';
import { RATE_SWEEP_INTERVAL_MS, type RateCount, type RateOutcome } from '../rate-store.js';

// $1 principal, $2 window key, $3 window length (ms), $4 limit. Returns the count, or no row when full.
const COUNT = `
  WITH clock AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)
  INSERT INTO rate_windows (principal, window_key, window_start, calls, expires_at)
  SELECT $1, $2, (ms / $3) * $3, 1, (ms / $3) * $3 + $3 FROM clock
  ON CONFLICT (principal, window_key, window_start) DO UPDATE SET calls = rate_windows.calls + 1 WHERE rate_windows.calls < $4
  RETURNING calls`;
const RETRY_AFTER = `SELECT ((ms / $1) * $1 + $1) - ms AS retry_ms FROM (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms) AS clock`;
const SWEEP = `DELETE FROM rate_windows WHERE expires_at <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint`;

/** The rate windows of one PostgreSQL journal. */
export class PostgresRates {
  #lastSweepMs = 0;

  constructor(private readonly pool: pg.Pool) {}

  async take(principal: string, windows: readonly RateCount[]): Promise<RateOutcome> {
    const client = await this.pool.connect();
    let outcome: RateOutcome = { ok: true };
    try {
      await client.query('BEGIN');
      for (const [index, window] of windows.entries()) {
        const counted = await client.query(COUNT, [principal, window.key, window.perMs, window.calls]);
        if (counted.rowCount === 1) continue;
        const retry = await client.query<{ retry_ms: number | string }>(RETRY_AFTER, [window.perMs]);
        outcome = { ok: false, index, retryAfterMs: Number(retry.rows[0]?.retry_ms ?? window.perMs) };
        break;
      }
      await client.query(outcome.ok ? 'COMMIT' : 'ROLLBACK');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    if (outcome.ok && Date.now() - this.#lastSweepMs > RATE_SWEEP_INTERVAL_MS) {
      this.#lastSweepMs = Date.now();
      // Ended windows are only clutter: a failed sweep is tried again on a later call.
      await this.pool.query(SWEEP).catch(() => undefined);
    }
    return outcome;
  }
}
