// vitest globalSetup: ONE throwaway PostgreSQL cluster per test run (see
// scripts/fleet-db/cluster.mjs), shared by every worker through
// TOOLHOST_TEST_PG; each test makes its own database (test/helpers/postgres.ts).
// Without PostgreSQL the PostgreSQL tests skip, except under CI=true, where
// this fails the run: CI installs it (.ci/run) and must never skip them.
import { findPostgresBin, startCluster } from '../../scripts/fleet-db/cluster.mjs';

export const PG_ENV = 'TOOLHOST_TEST_PG';

export default async function setup(): Promise<(() => void) | undefined> {
  // Both projects may run this in the one main process: one cluster is enough.
  if (process.env[PG_ENV] !== undefined) return undefined;
  const bin = findPostgresBin();
  if (bin === undefined) {
    if (process.env['CI'] === 'true') throw new Error('CI=true but PostgreSQL is not installed (.ci/run installs the postgresql package)');
    process.env[PG_ENV] = JSON.stringify({ unavailable: 'no initdb on PATH or in /usr/lib/postgresql/*/bin' });
    return undefined;
  }
  const cluster = await startCluster({ bin });
  process.env[PG_ENV] = JSON.stringify({
    socketDir: cluster.socketDir,
    port: cluster.port,
    superuser: cluster.superuser,
    passwordUser: cluster.passwordUser,
    password: cluster.password,
    root: cluster.root,
    bin: cluster.bin,
  });
  return () => cluster.stop();
}
