// serve's fast start (SPEC section 2.1): `initialize` is answered while an
// upstream server is still starting (a fixture server that completes its
// handshake only once the test writes a signal file), tools/list waits for it,
// notifications/tools/list_changed follows when its tools are in force, and a
// server that exits at start-up makes the tool its manifest names exactly fail
// `sandbox_unavailable` with the reason and its stderr tail, redacted and
// bounded, never `unknown_tool`.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KINDS, REPO_ROOT, connectStdioClient, ensureBuilt, type ClientKind } from '../helpers/mcp-clients.js';
import { STDERR_TAIL_LINES } from '../../src/runner/upstream/stderr-tail.js';
import { MARKER_ENV, countToolListChanges, makeHostDirs, stopClient, until, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

beforeAll(() => ensureBuilt(), 300_000);

const FIXTURES = join(REPO_ROOT, 'test/e2e/fixtures/fast-start');
const SECRET = 'fast-start-db-password-4711';

describe.each(CLIENT_KINDS)('%s client, servers starting in the background', (kind: ClientKind) => {
  let dirs: HostDirs;
  let client: HostClient | undefined;

  beforeAll(() => {
    dirs = makeHostDirs({ manifests: [FIXTURES], policy: 'kind: Policy\nname: fast_start\n' });
    writeFileSync(join(dirs.workspace, 'secret.txt'), `${SECRET}\n`);
  });
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  }, 60_000);

  it('answers initialize while a server still starts; tools/list waits for it; list_changed follows its listing', async () => {
    client = await connectStdioClient({ args: dirs.args, env: { [MARKER_ENV]: dirs.marker, FAST_START_DB_PASSWORD: SECRET } }, { kind });
    // The late server cannot have completed its handshake: its signal file does not exist yet.
    const changes = await countToolListChanges(client);
    const listing = client.listTools();
    writeFileSync(join(dirs.workspace, 'go-signal'), '');
    const names = (await listing).tools.map((tool) => String(tool['name']));
    expect(names).toEqual(expect.arrayContaining(['late__echo', 'late__ping_back']));
    // A modern (2026-07-28) client hears of changes only on a subscription it opens; legacy ones get the notification.
    if (kind !== 'v2-modern') await until(() => changes() > 0, 'notifications/tools/list_changed');
    const echoed = await client.callTool({ name: 'late__echo', arguments: { text: 'hi' } });
    expect(echoed['isError']).toBeFalsy();
    expect((echoed['content'] as Array<{ text: string }>)[0]?.text).toBe('echo: hi');
  }, 120_000);

  it("a restart that takes longer than the call's timeoutMs is not the call's time: the tool's own failure is tool_error, not timeout", async () => {
    if (!client) throw new Error('no client');
    const crashed = wireErrorOf(await client.callTool({ name: 'late__exit_now', arguments: {} }));
    expect(crashed.code).toBe('tool_crashed');
    // The next start waits for this file to go: longer than late__fail's timeoutMs of 1000 ms.
    writeFileSync(join(dirs.workspace, 'hold-start'), '');
    const failing = client.callTool({ name: 'late__fail', arguments: {} });
    // The scenario itself (not a synchronisation): the start outlasts the call's budget.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    rmSync(join(dirs.workspace, 'hold-start'));
    const error = wireErrorOf(await failing);
    expect(error.code).toBe('tool_error');
    expect(JSON.stringify(await client.callTool({ name: 'late__fail', arguments: {} }))).toContain('failed at once');
  }, 60_000);

  it('after a reload, a server that no longer starts keeps the tools it listed before, failing sandbox_unavailable (never unknown_tool)', async () => {
    if (!client) throw new Error('no client');
    expect(JSON.stringify(await client.callTool({ name: 'quick__echo', arguments: { text: 'before' } }))).toContain('echo: before');
    writeFileSync(join(dirs.workspace, 'refuse-start'), '');
    process.kill(client.pid!, 'SIGHUP');
    let error: Record<string, unknown> & { code: string } = { code: 'none' };
    await until(
      async () => {
        // A call before the reload is in force still reaches the old server; after it, the failure.
        const result = await client!.callTool({ name: 'quick__echo', arguments: { text: 'after' } });
        if (result['isError'] !== true) return false;
        error = wireErrorOf(result);
        return true;
      },
      'the reload to be in force',
      60_000,
      200,
    );
    expect(error.code).toBe('sandbox_unavailable');
    expect(String(error['stderrTail'])).toContain('slow-server: refusing to start');
    expect((await client.listTools()).tools.map((tool) => tool['name'])).toContain('quick__echo');
    rmSync(join(dirs.workspace, 'refuse-start'));
  }, 90_000);

  it('a server that exits at start-up: its exactly named tool is sandbox_unavailable with the reason and a redacted stderr tail', async () => {
    if (!client) throw new Error('no client');
    const result = await client.callTool({ name: 'broken__lookup', arguments: {} });
    const error = wireErrorOf(result);
    expect(error.code).toBe('sandbox_unavailable');
    expect(error['recovery']).toBe('retry');
    expect(String(error['reason'])).toContain('exited during start-up');
    const tail = String(error['stderrTail']);
    expect(tail.split('\n')).toHaveLength(STDERR_TAIL_LINES);
    expect(tail.split('\n').at(-1)).toBe('slow-server: cannot reach the database with [redacted]');
    expect(JSON.stringify(result)).not.toContain(SECRET);
    // Not offered in tools/list (its schema is unknown), and a tool it never named is unknown.
    expect((await client.listTools()).tools.map((tool) => tool['name'])).not.toContain('broken__lookup');
    await expect(client.callTool({ name: 'broken__other', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  }, 60_000);
});
