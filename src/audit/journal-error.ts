// The one error type of the journal and the artifact store. The host must not
// start (or run a tool) when the journal cannot be trusted, so every failure
// says what happened and what the operator can do, and carries a stable code.

/** Stable codes for journal failures; tests and the CLI branch on these. */
export type JournalErrorCode =
  /** The state dir is not a directory, is owned by someone else or is writable by others. */
  | 'state_dir_insecure'
  /** The database file cannot be read or written (permissions, I/O). */
  | 'journal_unreadable'
  /** The file is not an SQLite database, or SQLite reports damage. */
  | 'journal_corrupt'
  /** A valid SQLite database that is not a toolhost journal. */
  | 'journal_foreign'
  /** Written by a newer toolhost: this version does not know its schema. */
  | 'journal_newer_schema'
  /** A write failed (disk full, lock held too long): the call must not run. */
  | 'journal_write_failed'
  | 'journal_closed'
  /** No call with that id. */
  | 'unknown_call'
  /** reconcile on a call that is not (or no longer) interrupted. */
  | 'not_interrupted'
  /** The journal was opened for reading only (toolhost audit). */
  | 'journal_read_only'
  /** --journal is not a sqlite: or postgres:// URL, or carries a password. */
  | 'journal_url_invalid'
  /** The PostgreSQL server cannot be reached or refuses the login. */
  | 'journal_unreachable'
  /** No approval with that id. */
  | 'unknown_approval'
  /** approve on an approval whose time ran out. */
  | 'approval_expired'
  /** approve on an approval that is no longer pending. */
  | 'approval_decided'
  /** An artifact larger than the store takes. */
  | 'artifact_too_large'
  /** The journal signing key cannot be read, is not Ed25519, or others can read it. */
  | 'journal_key_invalid';

export class JournalError extends Error {
  constructor(
    readonly code: JournalErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'JournalError';
  }
}

/** Type guard for values crossing a catch. */
export function isJournalError(value: unknown): value is JournalError {
  return value instanceof JournalError;
}

const REFUSALS: ReadonlySet<JournalErrorCode> = new Set(['unknown_call', 'not_interrupted', 'unknown_approval', 'approval_expired', 'approval_decided']);

/** True for a refusal of the request (an unknown call, a decided approval): nothing was to be written, nothing was lost. */
export function isJournalRefusal(value: unknown): boolean {
  return value instanceof JournalError && REFUSALS.has(value.code);
}
