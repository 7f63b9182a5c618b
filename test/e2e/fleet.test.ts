// A fleet on one PostgreSQL journal (SPEC section 7.1), with real host
// processes: two hosts racing one idempotency key run the tool once (counted
// in a file both share), a host SIGKILLed mid-call is found `interrupted` by
// another once its lease expires, and an artifact one host made is read
// through another. The hosts start together on a fresh database, so they also
// race the migration.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForMarkedProcesses } from '../helpers/proc-scan.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres.js';
import { collectOutput, until, waitForExit } from '../helpers/host-session.js';
import { makeFleet, openRawSession, type Fleet } from '../helpers/fleet-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

// Short, so the doomed host's call is found quickly; not so short that a live host stalled
// on a loaded machine misses its renewals and counts as dead.
const LEASE_MS = 3000;
const SHORT_LEASE = { TOOLHOST_JOURNAL_LEASE_MS: String(LEASE_MS) };

describe.skipIf(postgresUnavailable !== undefined)('a fleet of hosts on one PostgreSQL journal', () => {
  let fleet: Fleet;
  let db: TestDatabase;
  beforeAll(async () => ensureBuilt(), 300_000);
  beforeEach(async () => {
    fleet = makeFleet();
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await fleet.cleanup();
    await db.drop();
  });

  const counted = () => (existsSync(join(fleet.workspace, 'counter.txt')) ? readFileSync(join(fleet.workspace, 'counter.txt'), 'utf8').split('\n').filter(Boolean) : []);

  it('two hosts racing one idempotency key run the tool once; the other gets in_progress, then the recorded result', async () => {
    const [a, b] = await Promise.all([fleet.start('a', db.url), fleet.start('b', db.url)]);
    const call = { name: 'counter', arguments: { label: 'race' }, _meta: { idempotencyKey: 'deploy-42' } };
    const calls = [a.callTool(call), b.callTool(call)];
    // The loser answers while the winner's tool still waits for the release file.
    const first = await Promise.race(calls);
    expect(wireErrorOf(first)).toMatchObject({ code: 'interrupted_side_effect', state: 'in_progress' });
    writeFileSync(join(fleet.workspace, 'release'), '');
    const results = await Promise.all(calls);
    const winner = results.find((result) => result['isError'] !== true);
    expect(winner?.['structuredContent']).toEqual({ counted: 'race' });
    expect(results.filter((result) => result['isError'] === true)).toHaveLength(1);
    expect(counted()).toEqual(['race']);

    // Now either host replays the recorded result; the effect stays single.
    for (const host of [a, b]) expect((await host.callTool(call))['structuredContent']).toEqual({ counted: 'race' });
    expect(counted()).toEqual(['race']);
    expect(await db.sql(`SELECT count(*)::int AS n FROM hosts`)).toEqual([{ n: 2 }]);
  });

  it('a host SIGKILLed mid-call: another host finds the call interrupted after the lease expires; audit and reconcile see it', async () => {
    const doomed = fleet.spawnRaw('doomed', db.url, SHORT_LEASE);
    const output = collectOutput(doomed);
    openRawSession(doomed);
    await until(() => output.lines.length > 0, 'the initialize answer', 30_000);
    const marker = `${fleet.marker}-writer`;
    doomed.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_writer', arguments: { marker }, _meta: { idempotencyKey: 'job-7' } } })}\n`,
    );
    expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);

    const survivor = await fleet.start('survivor', db.url, { env: SHORT_LEASE });
    const repeat = { name: 'slow_writer', arguments: { marker }, _meta: { idempotencyKey: 'job-7' } };
    // While the first host lives (and renews its lease), its call is in progress, never interrupted.
    expect(wireErrorOf(await survivor.callTool(repeat))).toMatchObject({ code: 'interrupted_side_effect', state: 'in_progress' });

    doomed.kill('SIGKILL');
    await waitForExit(doomed);
    let refusal: Record<string, unknown> = {};
    for (let attempt = 0; attempt < 100; attempt++) {
      refusal = wireErrorOf(await survivor.callTool(repeat));
      if (refusal['state'] === 'interrupted') break;
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 4));
    }
    expect(refusal).toMatchObject({ code: 'interrupted_side_effect', state: 'interrupted' });
    const callId = String(refusal['callId']);

    const audit = await fleet.cli(['audit', '--journal', db.url, '--status', 'interrupted', '--json']);
    expect(audit.code).toBe(0);
    expect((JSON.parse(audit.stdout) as Array<{ id: string }>).map((record) => record.id)).toEqual([callId]);
    const reconcile = await fleet.cli(['reconcile', callId, '--skip', '--journal', db.url]);
    expect(reconcile.code, reconcile.stderr).toBe(0);
    expect(wireErrorOf(await survivor.callTool(repeat))).toMatchObject({ code: 'interrupted_side_effect', state: 'reconciled_skip' });
  });

  it('an artifact link one host gave out is read through another host', async () => {
    const [maker, reader] = await Promise.all([fleet.start('maker', db.url), fleet.start('reader', db.url)]);
    const result = await maker.callTool({ name: 'big_text', arguments: { bytes: 5000 } });
    const link = (result['content'] as Array<Record<string, unknown>>).find((block) => block['type'] === 'resource_link');
    expect(link).toBeDefined();
    const read = await reader.readResource(String(link?.['uri']));
    const text = String(read.contents[0]?.['text']);
    expect(Buffer.byteLength(text)).toBe(5000);
    expect(text.startsWith('line 0 of a long result')).toBe(true);
  });
});
