// The state folder holds the journal and the artifacts: private to the user
// who runs the host. A folder others can write to could have its journal
// swapped under us, so it is refused rather than used.
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { JournalError } from './journal-error.js';

/** File name of the SQLite journal inside the state dir. */
const JOURNAL_FILE = 'journal.sqlite';

/** Absolute path of the journal database of a state dir. */
export function journalPathOf(stateDir: string): string {
  return join(stateDir, JOURNAL_FILE);
}

/**
 * Creates the state dir with mode 0700 (parents too) or checks an existing one:
 * it must be a directory owned by this user and not writable by group or others.
 * Readable by others only draws a warning: the operator may have chosen that.
 */
export function ensureStateDir(stateDir: string, logger?: Logger): void {
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new JournalError('state_dir_insecure', `Cannot create the state folder ${stateDir}: ${describe(error)}. Choose another with --state.`, { stateDir }, { cause: error });
  }
  checkPrivateDir(stateDir, logger);
}

/** Refuses a folder that is not ours or that others can write to. */
function checkPrivateDir(dir: string, logger?: Logger): void {
  const stats = statSync(dir);
  if (!stats.isDirectory()) {
    throw new JournalError('state_dir_insecure', `The state folder ${dir} is not a directory. Choose another with --state.`, {
      stateDir: dir,
    });
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new JournalError(
      'state_dir_insecure',
      `The state folder ${dir} belongs to user ${stats.uid}, not to the user running toolhost (${uid}). Use a folder of your own with --state.`,
      { stateDir: dir, ownerUid: stats.uid },
    );
  }
  const mode = stats.mode & 0o777;
  if ((mode & 0o022) !== 0) {
    throw new JournalError(
      'state_dir_insecure',
      `The state folder ${dir} is writable by other users (mode ${mode.toString(8)}), so its journal could be replaced. Run \`chmod 700 ${dir}\` or choose another with --state.`,
      { stateDir: dir, mode: mode.toString(8) },
    );
  }
  if ((mode & 0o044) !== 0) {
    logger?.warn({ stateDir: dir, mode: mode.toString(8) }, 'state folder is readable by other users; chmod 700 keeps artifacts private');
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
