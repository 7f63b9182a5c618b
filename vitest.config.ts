import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The unit test files written against the Journal interface (describeEachStore,
// describeStore): `unit` runs them on SQLite, `journal-postgres` again on PostgreSQL.
function storeContractFiles(): string[] {
  return readdirSync('test/unit', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => join('test/unit', name))
    .filter((file) => /\bdescribe(EachStore|Store)\(/.test(readFileSync(file, 'utf8')));
}

// One throwaway PostgreSQL for the run, for the projects that use it; each test makes its own database.
const POSTGRES = ['test/setup/postgres-cluster.ts'];

// isolated-vm needs --no-node-snapshot on Node 20+, so tests run in forked
// processes started with that flag. `unit` is the fast inner loop: in-process
// tests only (its setup file fails a test that starts a process), no
// PostgreSQL, and its files share their two forks instead of a fresh module
// graph each (loading src/ again for every file was most of its time): src/
// keeps no state in its modules (test/unit/module-state.test.ts), so a file
// cannot leave anything behind for the next. Integration tests spawn real
// processes and sandboxes; they get longer timeouts.
export default defineConfig({
  test: {
    pool: 'forks',
    execArgv: ['--no-node-snapshot'],
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          isolate: false,
          testTimeout: 15_000,
          setupFiles: ['test/setup/in-process-only.ts'],
          env: { TOOLHOST_JOURNAL_STORES: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'journal-postgres',
          include: storeContractFiles(),
          testTimeout: 15_000,
          globalSetup: POSTGRES,
          env: { TOOLHOST_JOURNAL_STORES: 'postgres' },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup: POSTGRES,
          // Bounds a hung test, never a slow one: a loaded 2-core CI machine runs the heaviest
          // e2e files (several hosts, CLI processes, PostgreSQL) past a minute.
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
