// The SELECT of an audit search on the SQLite journal: the conditions both
// stores share (call-filter-sql.ts), and the conditions of this schema's
// partial indexes, which SQLite needs to see written to use them.
import { CALL_COLUMNS, type CallFilter } from '../call-record.js';
import { callFilterSql } from '../call-filter-sql.js';

/** The SELECT of SqliteJournal.query(), newest first, and its values (tests read its query plan). */
export function callQuerySql(filter: CallFilter): { readonly sql: string; readonly values: unknown[] } {
  const { where, values } = callFilterSql(filter, SQLITE_FILTER);
  if (filter.limit !== undefined) values.push(Math.max(0, Math.floor(filter.limit)));
  const clauses = [where, ...partialIndexTerms(filter)].filter((clause) => clause !== '');
  const sql =
    `SELECT ${CALL_COLUMNS} FROM calls` +
    (clauses.length > 0 ? ` WHERE ${clauses.join(' AND ')}` : '') +
    ` ORDER BY started_at DESC, seq DESC${filter.limit === undefined ? '' : ' LIMIT ?'}`;
  return { sql, values };
}

/**
 * The conditions of the partial indexes on status and decision (migration 8), added to a
 * search for another value: SQLite uses a partial index only when the query's WHERE holds
 * its condition as written (it cannot see that `status = ?`, bound to 'failed', implies it).
 */
function partialIndexTerms(filter: CallFilter): string[] {
  const terms: string[] = [];
  if (filter.status !== undefined && filter.status !== 'completed') terms.push(`status <> 'completed'`);
  if (filter.decision !== undefined && filter.decision !== 'allow') terms.push(`decision <> 'allow'`);
  return terms;
}

const SQLITE_FILTER = { placeholder: () => '?', contains: (column: string, placeholder: string) => `instr(${column}, ${placeholder}) > 0` };
