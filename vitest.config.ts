import { defineConfig } from 'vitest/config';

// isolated-vm needs --no-node-snapshot on Node 20+, so tests run in forked
// processes started with that flag. Integration tests spawn real processes and
// sandboxes; they get longer timeouts than unit tests.
export default defineConfig({
  test: {
    pool: 'forks',
    execArgv: ['--no-node-snapshot'],
    fileParallelism: true,
    maxWorkers: 2,
    // One throwaway PostgreSQL for the run (the fleet journal's tests); each test makes its own database.
    globalSetup: ['test/setup/postgres-cluster.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 15_000 },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          // Bounds a hung test, never a slow one: a loaded 2-core CI machine runs the heaviest
          // e2e files (several hosts, CLI processes, PostgreSQL) past a minute.
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
