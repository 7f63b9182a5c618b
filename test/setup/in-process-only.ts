// setupFile of the `unit` project: the fast loop runs in-process tests only.
// Starting a child process (a runner's sandbox, python3, a CLI, mkfifo) fails
// the test with where it belongs instead, so a slow test cannot creep back in.
import { createRequire, syncBuiltinESMExports } from 'node:module';

const childProcess = createRequire(import.meta.url)('node:child_process') as Record<string, unknown>;

const STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

for (const name of STARTERS) {
  childProcess[name] = () => {
    throw new Error(`child_process.${name} in a unit test: tests that start processes belong to test/integration/ (npm run test:integration)`);
  };
}
// ESM importers of node:child_process read the live bindings; this copies the patched functions into them.
syncBuiltinESMExports();
