// The connection pool of the PostgreSQL journal, and what its failures mean.
// Integers of 64 bits come back as numbers (times in ms and byte counts fit a
// double exactly), set per pool: no global state of the pg module is changed.
// Error text from the server or the driver is scrubbed of the password before
// it reaches a message, a log line or a JournalError.
import pg from 'pg';
import { JournalError } from '../journal-error.js';

/** How long a new connection may take before the attempt fails. */
const CONNECT_TIMEOUT_MS = 5_000;
/** A statement that takes longer fails (the call it serves fails before its tool runs). */
const QUERY_TIMEOUT_MS = 15_000;
/** Connections one host keeps. */
const POOL_SIZE = 10;

const INT8_OID = 20;

/** A pool for a journal URL; `application_name` marks the host's sessions in pg_stat_activity. */
export function createPool(connectionString: string): pg.Pool {
  return new pg.Pool({
    connectionString,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    application_name: 'toolhost',
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
}

/** The start failed: say what to check, never the password. */
export function unreachable(error: unknown, display: string): JournalError {
  const reason = scrub(describe(error));
  return new JournalError(
    'journal_unreachable',
    `Cannot use the PostgreSQL journal ${display} (${reason}). Check that the server runs and accepts connections at that host and port, ` +
      `that the database exists, and that the user's password is in PGPASSWORD or ~/.pgpass.`,
    { location: display, ...pgFacts(error) },
    { cause: error },
  );
}

/** A failure during a call: the call fails (internal) before its tool runs; the pool reconnects on the next query. */
export function writeFailed(error: unknown, display: string): JournalError {
  if (error instanceof JournalError) return error;
  return new JournalError(
    'journal_write_failed',
    `Writing the PostgreSQL journal ${display} failed (${scrub(describe(error))}).`,
    { location: display, ...pgFacts(error) },
    { cause: error },
  );
}

function pgFacts(error: unknown): Record<string, string> {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? { pg: code } : {};
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  return error instanceof Error ? error.message || error.name : String(error);
}

// The password could come back in a driver message (it never should); cut it out all the same.
function scrub(text: string): string {
  const password = process.env['PGPASSWORD'];
  const bounded = text.slice(0, 300);
  return password !== undefined && password.length > 0 ? bounded.split(password).join('[redacted]') : bounded;
}
