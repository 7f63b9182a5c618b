// Why a record could not be written, as a gap record and an `internal` result
// say it (SPEC section 5.2): the disk (or the database's) is full, or the
// journal does not answer.

/** `disk_full` or `journal_unavailable`. */
type LostRecordReason = 'disk_full' | 'journal_unavailable';

/** The reason of a failed write, from SQLite's, PostgreSQL's or the OS's code. */
export function lostRecordReason(error: unknown): LostRecordReason {
  for (let cause: unknown = error, depth = 0; cause !== undefined && cause !== null && depth < 4; depth++) {
    const facts = cause as { code?: unknown; details?: { sqlite?: unknown; pg?: unknown } };
    const codes = [facts.code, facts.details?.sqlite, facts.details?.pg];
    // SQLITE_FULL, ENOSPC; PostgreSQL 53100 disk_full, 53400 configuration_limit_exceeded (a quota).
    if (codes.some((code) => code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100')) return 'disk_full';
    cause = (cause as { cause?: unknown }).cause;
  }
  return 'journal_unavailable';
}
