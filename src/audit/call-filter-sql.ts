// The WHERE clause of an audit search (CallFilter), for both stores: each gives
// its placeholder style and its substring test, the conditions are the same.
import type { CallFilter } from './call-record.js';

interface FilterDialect {
  /** The placeholder of the next value (SQLite `?`, PostgreSQL `$n`). */
  readonly placeholder: (position: number) => string;
  /** A case-sensitive "column contains text" test. */
  readonly contains: (column: string, placeholder: string) => string;
}

/** The conditions (joined with AND; empty when none) and their values, in order. */
export function callFilterSql(filter: CallFilter, dialect: FilterDialect): { readonly where: string; readonly values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  const add = (make: (placeholder: string) => string, value: unknown): void => {
    values.push(value);
    clauses.push(make(dialect.placeholder(values.length)));
  };
  if (filter.tool !== undefined) add((p) => `tool = ${p}`, filter.tool);
  if (filter.status !== undefined) add((p) => `status = ${p}`, filter.status);
  if (filter.principal !== undefined) add((p) => `principal = ${p}`, filter.principal);
  if (filter.decision !== undefined) add((p) => `decision = ${p}`, filter.decision);
  if (filter.code !== undefined) add((p) => `error_code = ${p}`, filter.code);
  if (filter.rule !== undefined) add((p) => dialect.contains('rule', p), filter.rule);
  if (filter.since !== undefined) add((p) => `started_at >= ${p}`, filter.since);
  if (filter.until !== undefined) add((p) => `started_at < ${p}`, filter.until);
  return { where: clauses.join(' AND '), values };
}
