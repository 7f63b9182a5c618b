// SIGTERM while a call runs over HTTP (SPEC sections 6 and 6.1): the running
// call is cancelled and answered (`cancelled`), its sandboxed process tree is
// killed, the journal is closed with the call's record, and the host exits 0.
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILT_MAIN, connectHttpClient, ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForMarkedProcesses } from '../helpers/proc-scan.js';
import { errorOf, makeHostDirs, type HostDirs } from './host-session.js';
import { startHttpHost, writeTokenFile } from './http-host.js';

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
    const error = errorOf(await answer);
    expect(error.code).toBe('cancelled');
    // stop() also proves that no process carrying the marker outlived the host.
    expect(await exited).toEqual({ code: 0, signal: null });
    await client.close().catch(() => undefined);

    const audit = spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'audit', '--state', dirs.stateDir, '--json'], { encoding: 'utf8' });
    const records = JSON.parse(audit.stdout) as Array<{ tool: string; status: string; principal: string; errorCode: string }>;
    expect(records).toContainEqual(expect.objectContaining({ tool: 'sleeper', principal: 'ops', status: 'cancelled', errorCode: 'cancelled' }));
  });
});
