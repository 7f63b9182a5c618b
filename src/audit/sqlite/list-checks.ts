// Migration 9: the CHECKs that hold a column to a list of more than two values
// (`status IN ('started', 'completed', ...)`) become chains of comparisons
// (`status = 'started' OR status = 'completed' OR ...`). SQLite evaluates such
// an IN list by building a temporary b-tree of its values each time the
// statement runs (lists of two or fewer are compared directly): three per
// call record inserted, each with a page cache allocated and freed, which cost
// more than the rest of the record's commit. The rule is the same, so the rows
// stored hold to it as they did: the tables' stored definitions are edited in
// place, SQLite's documented procedure for a constraint change that leaves the
// stored rows as they are (https://www.sqlite.org/lang_altertable.html#otheralter),
// instead of copying every table.
import type { Database } from 'better-sqlite3';

/** A CHECK of `column IN (values)` in the definition of `table`, as migration 1 or 2 wrote it. */
interface ListCheck {
  readonly table: string;
  readonly column: string;
  readonly values: readonly string[];
}

/** The CHECKs on lists of more than two values (the calls' and approvals' states and decisions). */
export const LIST_CHECKS: readonly ListCheck[] = [
  { table: 'calls', column: 'decision', values: ['allow', 'deny', 'ask', 'would_deny'] },
  { table: 'calls', column: 'approval', values: ['not_needed', 'approved', 'denied', 'required'] },
  { table: 'calls', column: 'status', values: ['started', 'completed', 'failed', 'interrupted', 'rejected', 'denied', 'cancelled', 'skipped'] },
  { table: 'approvals', column: 'state', values: ['pending', 'approved', 'denied', 'spent'] },
];

/**
 * Rewrites each check in its table's stored definition, inside the migration's transaction; a definition
 * that does not hold the check as written refuses the migration (nothing changes).
 */
export function rewriteListChecks(db: Database, checks: readonly ListCheck[]): void {
  const definitions = new Map<string, string>();
  const readDefinition = db.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`).pluck();
  for (const check of checks) {
    const sql = definitions.get(check.table) ?? (readDefinition.get(check.table) as string | undefined);
    const asList = `CHECK (${check.column} IN (${check.values.map(quoted).join(', ')}))`;
    if (sql === undefined || sql.split(asList).length !== 2) throw new Error(`the definition of table ${check.table} does not hold ${asList} once`);
    definitions.set(check.table, sql.replace(asList, `CHECK (${check.values.map((value) => `${check.column} = ${quoted(value)}`).join(' OR ')})`));
  }
  const version = Number(db.pragma('schema_version', { simple: true }));
  // Defensive mode (better-sqlite3's default) forbids writing the schema table, even with writable_schema.
  db.unsafeMode(true);
  try {
    db.pragma('writable_schema = ON');
    const write = db.prepare(`UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?`);
    for (const [table, sql] of definitions) write.run(sql, table);
    // Every connection to the file reads the definitions again.
    db.pragma(`schema_version = ${version + 1}`);
  } finally {
    db.pragma('writable_schema = OFF');
    db.unsafeMode(false);
  }
  const check = db.pragma('quick_check', { simple: true });
  if (check !== 'ok') throw new Error(`the journal failed its check after the CHECK rewrite: ${String(check)}`);
}

function quoted(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}
