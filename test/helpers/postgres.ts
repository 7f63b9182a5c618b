// The throwaway PostgreSQL of this test run (test/setup/postgres-cluster.ts):
// a fresh database per test, URLs for the socket (no password) and for TCP
// (password via PGPASSWORD). A test that stops its server starts its own
// cluster (scripts/fleet-db/cluster.mjs) so it never disturbs the others.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestCluster {
  readonly socketDir: string;
  readonly port: number;
  readonly superuser: string;
  readonly passwordUser: string;
  readonly password: string;
  readonly root: string;
  readonly bin: string;
}

function readCluster(): TestCluster | { unavailable: string } {
  const text = process.env['TOOLHOST_TEST_PG'];
  if (text === undefined) return { unavailable: 'the PostgreSQL test setup did not run (test/setup/postgres-cluster.ts)' };
  return JSON.parse(text) as TestCluster | { unavailable: string };
}

const found = readCluster();

/** The cluster, or undefined when PostgreSQL is not installed here (never under CI: the setup fails there). */
export const testCluster: TestCluster | undefined = 'unavailable' in found ? undefined : found;

/** Why PostgreSQL tests skip here, for describe.skipIf titles. */
export const postgresUnavailable: string | undefined = 'unavailable' in found ? found.unavailable : undefined;

function requireCluster(): TestCluster {
  if (testCluster === undefined) throw new Error(`PostgreSQL unavailable: ${postgresUnavailable}`);
  return testCluster;
}

/** postgres://postgres@<socket>:<port>/<db> (trust over the socket). */
export function socketUrl(database: string): string {
  const c = requireCluster();
  return `postgres://${c.superuser}@${encodeURIComponent(c.socketDir)}:${c.port}/${database}`;
}

/** postgres://toolhost_pw@127.0.0.1:<port>/<db>: needs PGPASSWORD = testCluster.password. */
export function passwordUrl(database: string): string {
  const c = requireCluster();
  return `postgres://${c.passwordUser}@127.0.0.1:${c.port}/${database}`;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: socketUrl('postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  readonly name: string;
  /** Socket URL as the superuser. */
  readonly url: string;
  /** Runs SQL in this database as the superuser. */
  sql<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** A fresh, empty database (owned by the password user too, so both URLs work). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const c = requireCluster();
  const name = `t_${randomBytes(8).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name} OWNER ${c.passwordUser}`));
  const url = socketUrl(name);
  return {
    name,
    url,
    async sql(text, values) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
