// The fleet journal when PostgreSQL goes away and when credentials are at
// stake (SPEC section 7.1): a database stopped mid-run fails the calls that
// need it before their tools run (an `internal` result, reason
// `journal_unavailable`), /readyz says 503 meanwhile, the host keeps serving and
// recovers when the database returns; an unreachable database stops the host
// at start with a message that says what to check; the password never shows
// in argv, the log or error text. The outage test stops a cluster of its own,
// so the run's shared cluster (and the tests using it) never notice.
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../scripts/fleet-db/cluster.mjs';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { createTestDatabase, passwordUrl, postgresUnavailable, testCluster, type TestDatabase } from '../helpers/postgres.js';
import { makeFleet, type Fleet } from '../helpers/fleet-session.js';
import { get, startHttpHost } from '../helpers/http-host.js';
import { makeHostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

describe.skipIf(postgresUnavailable !== undefined)('the fleet journal when PostgreSQL goes away', () => {
  let cluster: Cluster;
  let fleet: Fleet;
  beforeAll(async () => {
    await ensureBuilt();
    cluster = await startCluster();
  }, 300_000);
  afterAll(() => cluster?.stop());
  beforeEach(() => {
    fleet = makeFleet();
    writeFileSync(join(fleet.workspace, 'release'), '');
  });
  afterEach(async () => fleet.cleanup());

  it('a database stopped mid-run fails calls cleanly before their tools run; the host recovers when it returns', async () => {
    cluster.psql('CREATE DATABASE outage');
    const url = `postgres://postgres@${encodeURIComponent(cluster.socketDir)}:${cluster.port}/outage`;
    const host = await fleet.start('a', url);
    expect((await host.callTool({ name: 'counter', arguments: { label: 'before' } }))['structuredContent']).toEqual({ counted: 'before' });

    cluster.pause();
    // The host knows the cause: an error result the caller can read and retry, not a JSON-RPC fault.
    const failure = await host.callTool({ name: 'counter', arguments: { label: 'during' } });
    expect(wireErrorOf(failure)).toEqual({ code: 'internal', reason: 'journal_unavailable', stage: 'journal', recovery: 'retry' });
    const counter = () => readFileSync(join(fleet.workspace, 'counter.txt'), 'utf8').split('\n').filter(Boolean);
    expect(counter()).toEqual(['before']);

    cluster.resume();
    // The pool reconnects on the next query: the very next call succeeds.
    expect((await host.callTool({ name: 'counter', arguments: { label: 'after' } }))['structuredContent']).toEqual({ counted: 'after' });
    expect(counter()).toEqual(['before', 'after']);
  });

  it('/readyz answers 503 while the database is stopped, the host lives on, and 200 once it returns', async () => {
    cluster.psql('CREATE DATABASE readiness');
    const url = `postgres://postgres@${encodeURIComponent(cluster.socketDir)}:${cluster.port}/readiness`;
    const dirs = makeHostDirs({ extraArgs: ['--journal', url] });
    const host = await startHttpHost(dirs, ['--no-auth']);
    try {
      expect(await readiness(host.base)).toEqual({ status: 200, body: { status: 'ready' } });
      cluster.pause();
      // Each probe is a read the stopped server cannot answer: not ready, every time, and no crash.
      for (let probe = 0; probe < 3; probe += 1) {
        expect(await readiness(host.base)).toEqual({ status: 503, body: { status: 'journal_unavailable' } });
      }
      expect((await get(`${host.base}/healthz`)).status).toBe(200);
      expect(host.process.exitCode).toBeNull();
      cluster.resume();
      expect(await readiness(host.base)).toEqual({ status: 200, body: { status: 'ready' } });
      expect(host.stderr()).not.toContain('unhandled');
      expect(await host.stop()).toEqual({ code: 0, signal: null });
    } finally {
      if (host.process.exitCode === null) host.process.kill('SIGKILL');
      dirs.cleanup();
    }
  });

  it('an unreachable database at start stops the host with a message that says what to check', async () => {
    const url = `postgres://postgres@127.0.0.1:1/toolhost`;
    const serve = await fleet.cli(['serve', ...fleet.argsFor('x', url)]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('Cannot use the PostgreSQL journal postgres://postgres@127.0.0.1:1/toolhost');
    expect(serve.stderr).toContain('PGPASSWORD');
  });
});

describe.skipIf(postgresUnavailable !== undefined)('the journal password', () => {
  let fleet: Fleet;
  let db: TestDatabase;
  beforeAll(async () => ensureBuilt(), 300_000);
  beforeEach(async () => {
    fleet = makeFleet();
    // The counter tool holds until this file exists: here nothing races it.
    writeFileSync(join(fleet.workspace, 'release'), '');
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await fleet.cleanup();
    await db.drop();
  });

  it('comes from PGPASSWORD and never shows in argv, the log or the journal', async () => {
    const password = testCluster!.password;
    const logFile = join(fleet.root, 'host.log');
    const host = await fleet.start('a', passwordUrl(db.name), { env: { PGPASSWORD: password, TOOLHOST_LOG_LEVEL: 'debug' }, extra: ['--log-file', logFile] });
    expect((await host.callTool({ name: 'counter', arguments: { label: 'pw' } }))['structuredContent']).toEqual({ counted: 'pw' });
    const cmdline = readFileSync(`/proc/${host.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain(passwordUrl(db.name));
    expect(cmdline).not.toContain(password);
    expect(existsSync(logFile)).toBe(true);
    expect(readFileSync(logFile, 'utf8')).not.toContain(password);
    expect(host.stderrText()).not.toContain(password);
    const rows = await db.sql(`SELECT * FROM calls`);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(password);
    // The host's sessions are TCP logins of the password user (scram), not the socket's trust.
    const sessions = await db.sql(`SELECT DISTINCT usename, host(client_addr) AS addr FROM pg_stat_activity WHERE datname = $1 AND application_name = 'toolhost'`, [db.name]);
    expect(sessions).toEqual([{ usename: testCluster!.passwordUser, addr: '127.0.0.1' }]);
  });

  it('a wrong password stops the host, and the error text does not carry it', async () => {
    const wrong = 'not-the-password-9f3c1e';
    const serve = await fleet.cli(['serve', ...fleet.argsFor('x', passwordUrl(db.name))], { PGPASSWORD: wrong });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('Cannot use the PostgreSQL journal');
    expect(serve.stderr).not.toContain(wrong);
  });

  it('a URL with an inline password is refused, pointing at PGPASSWORD, without echoing it', async () => {
    const secret = 'inline-secret-77aa';
    const url = `postgres://${testCluster!.passwordUser}:${secret}@127.0.0.1:${testCluster!.port}/${db.name}`;
    for (const command of [
      ['serve', ...fleet.argsFor('x', url)],
      ['audit', '--journal', url],
    ]) {
      const run = await fleet.cli(command);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('set PGPASSWORD');
      expect(run.stderr).not.toContain(secret);
    }
  });
});

async function readiness(base: string): Promise<{ status: number; body: unknown }> {
  const response = await get(`${base}/readyz`);
  return { status: response.status, body: JSON.parse(response.body) as unknown };
}
