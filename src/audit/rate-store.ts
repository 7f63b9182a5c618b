// What a rate store does (SPEC section 4.1, `limits.rate`): counts one call
// of a principal in each of its windows, atomically, or none when one of them
// is full. Both journal stores implement it over their own table
// (rate-windows-schema.ts): SQLite in one transaction on the host's clock,
// PostgreSQL in one transaction on the database's clock, so every host of a
// fleet shares the counts and agrees on the windows.

/** A window as the store counts it. */
export interface RateCount {
  /** Identifies the window (its tools, class and length). */
  readonly key: string;
  readonly perMs: number;
  /** Calls allowed in one window. */
  readonly calls: number;
}

/** Counted in every window, or refused by the first full one with the time until it ends. */
export type RateOutcome = { readonly ok: true } | { readonly ok: false; readonly index: number; readonly retryAfterMs: number };

/** How often a store deletes windows that have ended. */
export const RATE_SWEEP_INTERVAL_MS = 60_000;
