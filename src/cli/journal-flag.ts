// `--journal URL` for the commands that read or write the journal (serve, call,
// audit, reconcile, approvals, approve; SPEC sections 7.1 and 8).
import { existsSync } from 'node:fs';
import type { Journal } from '../audit/journal.js';
import { parseJournalUrl } from '../audit/journal-url.js';
import { journalUrlFrom, openJournal } from '../audit/open-journal.js';

/** The flag, for parseCommandArgs. */
export const JOURNAL_FLAG = { journal: { type: 'string' }, 'journal-key': { type: 'string' } } as const;

export const JOURNAL_FLAG_HELP = `  --journal URL     the journal: sqlite:PATH (default <state>/journal.sqlite) or
                    postgres://USER@HOST:PORT/DATABASE (password from PGPASSWORD or
                    ~/.pgpass, never in the URL); default $TOOLHOST_JOURNAL
  --journal-key F   the Ed25519 key that signs this process's chain of the journal
                    (default $TOOLHOST_JOURNAL_KEY, else <state>/journal-signing-key.pem)`;

/** The --journal value, if given. */
export function journalFlagFrom(values: Record<string, unknown>): string | undefined {
  return typeof values['journal'] === 'string' ? values['journal'] : undefined;
}

/** The --journal-key value, if given. */
export function journalKeyFrom(values: Record<string, unknown>): string | undefined {
  return typeof values['journal-key'] === 'string' ? values['journal-key'] : undefined;
}

/**
 * Opens the journal for an operator command (no host row, no lease). A missing
 * SQLite file is reported on stderr (undefined is returned) rather than created.
 */
export async function openOperatorJournal(
  command: string,
  values: Record<string, unknown>,
  stateDir: string,
  options: { readonly recover?: boolean } = {},
): Promise<Journal | undefined> {
  const flag = journalUrlFrom(journalFlagFrom(values));
  const url = parseJournalUrl(flag, stateDir);
  if (url.kind === 'sqlite' && !existsSync(url.file)) {
    process.stderr.write(`toolhost ${command}: no journal at ${url.file} (no call recorded yet, or another --state folder or --journal)\n`);
    return undefined;
  }
  return openJournal({ url: flag, stateDir, asHost: false, keyFile: journalKeyFrom(values), ...(options.recover !== undefined ? { recover: options.recover } : {}) });
}
