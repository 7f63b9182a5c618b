// The rate windows table (SPEC section 4.1, `limits.rate`), the same in the
// SQLite and the PostgreSQL journal: one row per principal, window and window
// start, its count raised by one atomic statement per call (rate-store.ts).
// Times are milliseconds by the store's clock, so every host of a fleet agrees
// which window a call falls in.

/** DDL of the table, for a migration of either store (BIGINT is an integer in SQLite too). */
export const RATE_WINDOWS_TABLE = `
  CREATE TABLE rate_windows (
    principal    TEXT NOT NULL,
    window_key   TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    calls        INTEGER NOT NULL,
    expires_at   BIGINT NOT NULL,
    PRIMARY KEY (principal, window_key, window_start)
  );
  CREATE INDEX rate_windows_by_expiry ON rate_windows(expires_at);
`;
