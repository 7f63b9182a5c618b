// SIGTERM while a call runs over HTTP (SPEC sections 6 and 6.1): the running
// call is cancelled and answered (`cancelled`), its sandboxed process tree is
// killed, the journal is closed with the call's record, and the host exits 0.
// SIGHUP reloads, and a legacy client over HTTP hears notifications/tools/list_changed.
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILT_MAIN, connectHttpClient, ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForMarkedProcesses } from '../helpers/proc-scan.js';
import { countToolListChanges, makeHostDirs, type HostClient, type HostDirs, until } from '../helpers/host-session.js';
import { startHttpHost, writeTokenFile } from '../helpers/http-host.js';
import { wireErrorOf } from '../helpers/wire-results.js';

let dirs: HostDirs | undefined;

afterEach(() => {
  dirs?.cleanup();
  dirs = undefined;
});

describe('serve --http on SIGTERM', () => {
  it('cancels the in-flight call, answers it, closes the journal and exits 0', async () => {
    await ensureBuilt();
    dirs = makeHostDirs();
    const { file, tokens } = writeTokenFile(dirs, ['ops']);
    const host = await startHttpHost(dirs, ['--auth-tokens', file]);
    const client = await connectHttpClient(host.url, tokens['ops'], { kind: 'v1-legacy' });
    const marker = `${dirs.marker}-running`;
    const answer = client.callTool({ name: 'sleeper', arguments: { marker } });
    expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);

    const exited = host.stop();
    const error = wireErrorOf(await answer);
    expect(error.code).toBe('cancelled');
    // stop() also proves that no process carrying the marker outlived the host.
    expect(await exited).toEqual({ code: 0, signal: null });
    await client.close().catch(() => undefined);

    const audit = spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'audit', '--state', dirs.stateDir, '--json'], { encoding: 'utf8' });
    const records = JSON.parse(audit.stdout) as Array<{ tool: string; status: string; principal: string; errorCode: string }>;
    expect(records).toContainEqual(expect.objectContaining({ tool: 'sleeper', principal: 'ops', status: 'cancelled', errorCode: 'cancelled' }));
  });
});

describe('serve --http on SIGHUP', () => {
  it('reloads, and a legacy client hears tools/list_changed on its session stream', async () => {
    await ensureBuilt();
    dirs = makeHostDirs({ extraArgs: ['--no-watch'] });
    const { file, tokens } = writeTokenFile(dirs, ['ops']);
    const host = await startHttpHost(dirs, ['--auth-tokens', file]);
    const client = await connectHttpClient(host.url, tokens['ops'], { kind: 'v1-legacy' });
    try {
      const changes = await countToolListChanges(client as HostClient);
      await client.listTools();
      // The client opens its standalone GET stream on its own schedule; a reload before that
      // is not heard, so reload again (bounded) until one is.
      for (let attempt = 0; attempt < 20 && changes() === 0; attempt++) {
        host.process.kill('SIGHUP');
        await until(() => changes() > 0, 'notifications/tools/list_changed', 3_000).catch(() => undefined);
      }
      expect(changes()).toBeGreaterThan(0);
    } finally {
      await client.close().catch(() => undefined);
      expect(await host.stop()).toEqual({ code: 0, signal: null });
    }
  });
});

describe('maxConcurrency per principal over HTTP', () => {
  it("one principal's slots are its own: a full principal waits, another one runs", async () => {
    await ensureBuilt();
    dirs = makeHostDirs({ policy: 'kind: Policy\nname: one-slot\nlimits:\n  maxConcurrency: 1\n' });
    const { file, tokens } = writeTokenFile(dirs, ['busy', 'idle']);
    const host = await startHttpHost(dirs, ['--auth-tokens', file]);
    const busy = await connectHttpClient(host.url, tokens['busy'], { kind: 'v1-legacy' });
    const idle = await connectHttpClient(host.url, tokens['idle'], { kind: 'v2-modern' });
    try {
      const marker = `${dirs.marker}-slot`;
      const cancel = new AbortController();
      const holding = busy.callTool({ name: 'sleeper', arguments: { marker } }, { signal: cancel.signal }).catch((error: unknown) => error);
      expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);
      let queuedDone = false;
      const queued = busy.callTool({ name: 'echo', arguments: { text: 'after the sleeper' } }).finally(() => (queuedDone = true));

      // The other principal's call runs at once, while busy's only slot is held.
      const other = await idle.callTool({ name: 'echo', arguments: { text: 'not queued' } });
      expect(other['isError']).not.toBe(true);
      expect(queuedDone).toBe(false);
      expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);

      cancel.abort();
      await holding;
      expect((await queued)['isError']).not.toBe(true);
    } finally {
      await Promise.allSettled([busy.close(), idle.close()]);
      expect(await host.stop()).toEqual({ code: 0, signal: null });
    }
  });
});
