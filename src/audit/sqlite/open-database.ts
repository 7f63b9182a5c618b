// Opens the journal database and fails closed: a file that is not SQLite, is
// damaged, belongs to something else or to a newer toolhost stops the host with
// a JournalError. Nothing here ever deletes, truncates or recreates the file;
// SQLite writes nothing to a file whose header it cannot read.
import { closeSync, constants, lstatSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Logger } from '../../log.js';
import { JournalError } from '../journal-error.js';
import { checkSchema, migrate } from './migrations.js';

/** How long a writer waits for another host's transaction before failing. */
export const BUSY_TIMEOUT_MS = 5_000;

/**
 * Each connection's page cache, in KiB (PRAGMA cache_size, negative: KiB): SQLite's own
 * default. better-sqlite3 builds SQLite with 16 MB per connection instead, and the host's
 * connection, which commits every call answered alone in its event-loop turn, kept each page
 * it wrote: its cache grew with the journal (~2 KB a call) toward 16 MB, and the host's memory
 * outside the JavaScript heap by ~10 MB over 10,000 sequential isolate calls. The journal is
 * appended to (v7 call ids, chains by sequence): a commit touches the last pages of each
 * B-tree, and a read looks up a call by its id or key; neither needs more pages than this.
 */
export const PAGE_CACHE_KIB = 2000;

/** Opens (creating if absent) and migrates the journal at `file`. */
export function openJournalDatabase(file: string, logger: Logger): Database.Database {
  createPrivateFile(file);
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw toJournalError(error, file);
  }
  try {
    // One read transaction: the version, the application id and the table count
    // must come from one snapshot, or a host starting beside another that is
    // migrating the new file sees its tables before its application id and
    // calls the journal foreign.
    retryWhileBusy(() => db.transaction(() => checkSchema(db, file))());
    const check = db.pragma('quick_check(1)', { simple: true });
    if (check !== 'ok') {
      throw new JournalError('journal_corrupt', damagedMessage(file, String(check)), { file, check: String(check) });
    }
    // WAL lets several hosts share the folder. NORMAL: a commit reaches the
    // OS at once (safe if the host crashes) but is fsynced only at checkpoints,
    // so power loss can lose the last records. Write-ahead records need more:
    // Journal.begin() commits them with FULL (see durably()), and that fsync
    // also makes every earlier record in the WAL durable.
    retryWhileBusy(() => db.pragma('journal_mode = WAL'));
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    migrate(db);
  } catch (error) {
    db.close();
    throw toJournalError(error, file);
  }
  logger.debug({ file }, 'journal opened');
  return db;
}

/**
 * Runs `operation`, retrying for up to BUSY_TIMEOUT_MS while another host holds
 * the lock it needs. SQLite's busy handler does not cover every case: two
 * connections opening a new file together can both hold a shared lock and
 * want an exclusive one (the switch to WAL), and SQLite then answers one of
 * them SQLITE_BUSY at once instead of waiting, to avoid a deadlock.
 */
function retryWhileBusy<T>(operation: () => T): T {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 1; ; attempt++) {
    try {
      return operation();
    } catch (error) {
      const code = (error as { code?: unknown })?.code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() > deadline) throw error;
      // Opening is synchronous; a short blocking pause, growing, lets the other host finish.
      Atomics.wait(pause, 0, 0, Math.min(5 * attempt, 50));
    }
  }
}

/** Maps an SQLite or file-system failure to a JournalError that says what to do. */
export function toJournalError(error: unknown, file: string): JournalError {
  if (error instanceof JournalError) return error;
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : '';
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new JournalError('journal_corrupt', damagedMessage(file, reason), { file, sqlite: code }, { cause: error });
  }
  if (code.startsWith('SQLITE_BUSY') || code === 'SQLITE_FULL' || code.startsWith('SQLITE_CONSTRAINT')) {
    return new JournalError('journal_write_failed', `Writing the journal ${file} failed (${reason}).`, { file, sqlite: code }, { cause: error });
  }
  return new JournalError(
    'journal_unreadable',
    `The journal ${file} cannot be opened (${reason}). Check that the file and its folder are readable and writable by this user; the journal was left untouched.`,
    { file, sqlite: code || undefined },
    { cause: error },
  );
}

function damagedMessage(file: string, reason: string): string {
  return (
    `The journal ${file} is damaged or not a database (${reason}). toolhost will not run on a journal it cannot trust ` +
    `and never replaces one: move the file aside (keep it for investigation) or restore it from a backup, then start again.`
  );
}

// Create the file ourselves with mode 0600, before SQLite does with the umask's
// mode; SQLite gives the -wal and -shm files the same mode as the database.
function createPrivateFile(file: string): void {
  try {
    const stats = lstatSync(file);
    if (!stats.isFile()) {
      throw new JournalError('journal_unreadable', `The journal path ${file} is not a regular file; the host refuses to follow it.`, {
        file,
      });
    }
    return;
  } catch (error) {
    if (error instanceof JournalError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw toJournalError(error, file);
  }
  try {
    closeSync(openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600));
  } catch (error) {
    // Another host created it first: fine, it is checked when opened.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw toJournalError(error, file);
  }
}
