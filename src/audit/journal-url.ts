// `--journal URL` (SPEC section 7.1): `sqlite:PATH` (the default,
// <state>/journal.sqlite) or `postgres://…`. A PostgreSQL password never goes
// in the URL (it would sit in argv, shell history and process listings): it
// comes from PGPASSWORD or a .pgpass file, so a URL that carries one is refused.
import { isAbsolute, resolve } from 'node:path';
import { JournalError } from './journal-error.js';
import { journalPathOf } from './state-dir.js';

export type JournalUrl =
  | { readonly kind: 'sqlite'; readonly file: string }
  /** `connectionString` has no password; `display` is safe to print. */
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly display: string };

/** The environment variable that chooses the journal when --journal is absent. */
export const JOURNAL_ENV = 'TOOLHOST_JOURNAL';

/** Parses a journal URL; undefined or empty means the state folder's SQLite file. */
export function parseJournalUrl(text: string | undefined, stateDir: string, cwd = process.cwd()): JournalUrl {
  if (text === undefined || text === '' || text === 'sqlite:') return { kind: 'sqlite', file: journalPathOf(stateDir) };
  if (text.startsWith('sqlite:')) {
    const path = text.slice('sqlite:'.length);
    return { kind: 'sqlite', file: isAbsolute(path) ? path : resolve(cwd, path) };
  }
  if (text.startsWith('postgres://') || text.startsWith('postgresql://')) return parsePostgresUrl(text);
  throw new JournalError('journal_url_invalid', `--journal takes sqlite:PATH or postgres://USER@HOST:PORT/DATABASE; got "${shorten(text)}".`, {});
}

function parsePostgresUrl(text: string): JournalUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new JournalError('journal_url_invalid', 'The --journal PostgreSQL URL does not parse; write it as postgres://USER@HOST:PORT/DATABASE.', {});
  }
  if (url.password !== '' || url.searchParams.has('password')) {
    // Never echo the URL: it holds the password.
    throw new JournalError(
      'journal_url_invalid',
      'The --journal URL carries a password. Remove it from the URL and set PGPASSWORD (or a ~/.pgpass entry) instead: a password in a URL ends up in process listings and logs.',
      { reason: 'password_in_url' },
    );
  }
  const host = url.searchParams.get('host') ?? (url.hostname === '' ? '(local socket)' : decodeURIComponent(url.hostname));
  const port = url.port === '' ? '' : `:${url.port}`;
  const user = url.username === '' ? '' : `${decodeURIComponent(url.username)}@`;
  return { kind: 'postgres', connectionString: text, display: `postgres://${user}${host}${port}${url.pathname}` };
}

function shorten(text: string): string {
  // An unknown scheme may still hold a secret after "//user:": show only the scheme.
  const colon = text.indexOf(':');
  return colon > 0 && colon < 20 ? `${text.slice(0, colon)}:…` : '…';
}
