// Opens the store a journal URL names (SPEC section 7.1). The supervisor and
// the CLI call this and see only the Journal interface.
import type { Logger } from '../log.js';
import type { Journal } from './journal.js';
import { JOURNAL_ENV, parseJournalUrl } from './journal-url.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';

interface OpenJournalOptions {
  /** `--journal URL`; undefined falls back to TOOLHOST_JOURNAL, then <state>/journal.sqlite. */
  readonly url?: string | undefined;
  readonly stateDir: string;
  readonly logger?: Logger;
  readonly sessionId?: string;
  /** false for readers (audit, reconcile, approvals). Default true. */
  readonly asHost?: boolean;
  /** PostgreSQL host lease; default TOOLHOST_JOURNAL_LEASE_MS, else 30 s. */
  readonly leaseMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** SQLite: commit read-only calls' batched records on a writer thread (`serve`). */
  readonly writeBatchesOffThread?: boolean;
  /** The chain's signing key file (`--journal-key FILE`); default TOOLHOST_JOURNAL_KEY, else <state>/journal-signing-key.pem. */
  readonly keyFile?: string | undefined;
  /** Entries between two signed checkpoints; default TOOLHOST_JOURNAL_CHECKPOINT_EVERY, else 100. */
  readonly checkpointEvery?: number;
  /** false: write nothing at open, not even dead hosts' calls (`audit verify`, `audit export`). Default true. */
  readonly recover?: boolean;
}

/** The URL in force: the flag, else TOOLHOST_JOURNAL, else undefined (SQLite in the state folder). */
export function journalUrlFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return flag ?? (env[JOURNAL_ENV] === '' ? undefined : env[JOURNAL_ENV]);
}

/** Opens (migrating, recovering) the journal the options name; throws a JournalError that says what to do. */
export async function openJournal(options: OpenJournalOptions): Promise<Journal> {
  const env = options.env ?? process.env;
  const url = parseJournalUrl(journalUrlFrom(options.url, env), options.stateDir, options.cwd);
  const common = {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    ...(options.asHost !== undefined ? { asHost: options.asHost } : {}),
    ...(options.keyFile !== undefined ? { keyFile: options.keyFile } : {}),
    ...(options.checkpointEvery !== undefined ? { checkpointEvery: options.checkpointEvery } : {}),
    ...(options.recover !== undefined ? { recover: options.recover } : {}),
    env,
  };
  if (url.kind === 'sqlite') return openSqliteStore(options.stateDir, { ...common, file: url.file, writeBatchesOffThread: options.writeBatchesOffThread === true });
  // The PostgreSQL driver loads only for a PostgreSQL journal: a SQLite host starts sooner without it.
  const { DEFAULT_LEASE_MS, LEASE_ENV, openPostgresStore } = await import('./postgres/pg-store.js');
  const leaseMs = options.leaseMs ?? leaseFromEnv(env, LEASE_ENV, DEFAULT_LEASE_MS);
  return openPostgresStore(url.connectionString, url.display, { ...common, leaseMs, stateDir: options.stateDir });
}

function leaseFromEnv(env: NodeJS.ProcessEnv, variable: string, fallbackMs: number): number {
  const text = env[variable];
  if (text === undefined || text === '') return fallbackMs;
  const ms = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(ms) || ms < 100) throw new RangeError(`${variable} must be a whole number of milliseconds, at least 100; got "${text}"`);
  return ms;
}
