// `--journal URL` (SPEC section 7.1): `sqlite:PATH` (the default,
// <state>/journal.sqlite) or `postgres://…`. A PostgreSQL password never goes
// in the URL (it would sit in argv, shell history and process listings): it
// comes from PGPASSWORD or a .pgpass file, so a URL that carries one is refused.
import { isAbsolute, resolve } from 'node:path';
import { JournalError } from './journal-error.js';
import { journalPathOf } from './state-dir.js';

type JournalUrl =
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

// Not WHATWG URL: it rejects `postgres://user@/db?host=/run/postgresql` (a Unix
// socket), which libpq and pg accept. Only what we must know is read here; pg parses the rest.
const POSTGRES_URL = /^postgres(?:ql)?:\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/;

function parsePostgresUrl(text: string): JournalUrl {
  const match = POSTGRES_URL.exec(text);
  if (match === null) {
    throw new JournalError('journal_url_invalid', 'The --journal PostgreSQL URL does not parse; write it as postgres://USER@HOST:PORT/DATABASE.', {});
  }
  const [, userinfo = '', hostPort = '', path = '', query = ''] = match;
  const params = new URLSearchParams(query);
  const colon = userinfo.indexOf(':');
  if ((colon >= 0 && colon < userinfo.length - 1) || params.has('password')) {
    // Never echo the URL: it holds the password.
    throw new JournalError(
      'journal_url_invalid',
      'The --journal URL carries a password. Remove it from the URL and set PGPASSWORD (or a ~/.pgpass entry) instead: a password in a URL ends up in process listings and logs.',
      { reason: 'password_in_url' },
    );
  }
  const user = colon >= 0 ? userinfo.slice(0, colon) : userinfo;
  const host = params.get('host') ?? (hostPort === '' ? '(local socket)' : safeDecode(hostPort));
  const port = params.get('port');
  const display = `postgres://${user === '' ? '' : `${safeDecode(user)}@`}${host}${port ? `:${port}` : ''}${path}`;
  return { kind: 'postgres', connectionString: text, display };
}

/**
 * The flags an operator command (`toolhost approve`) needs to reach the journal a
 * host uses, from any folder: `--state DIR` for the state folder's own SQLite file,
 * else `--journal URL` (absolute; a PostgreSQL URL never holds a password, parse
 * refuses one). Shell-quoted where needed.
 */
export function journalFlagsFor(text: string | undefined, stateDir: string, cwd = process.cwd()): string {
  const url = parseJournalUrl(text, stateDir, cwd);
  if (url.kind === 'sqlite') {
    return url.file === journalPathOf(stateDir) ? `--state ${shellQuote(resolve(cwd, stateDir))}` : `--journal ${shellQuote(`sqlite:${url.file}`)}`;
  }
  return `--journal ${shellQuote(url.connectionString)}`;
}

/** `text` as one POSIX shell word: as it is when it is plain, else in single quotes. */
export function shellQuote(text: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function shorten(text: string): string {
  // An unknown scheme may still hold a secret after "//user:": show only the scheme.
  const colon = text.indexOf(':');
  return colon > 0 && colon < 20 ? `${text.slice(0, colon)}:…` : '…';
}
