// How `toolhost serve` ends: stdin EOF or SIGTERM with a process tool running
// cancels it (its whole process tree dies), answers it `cancelled`, closes
// the journal and exits 0 within a bounded time, leaving no process behind.
// A configuration that does not load exits 1 with file:line:col lines.
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { findChildProcesses, isAlive, pollUntil, waitForMarkedProcesses, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { collectOutput, makeHostDirs, spawnRawHost, until, waitForExit, type HostDirs, type RawHost } from './host-session.js';

beforeAll(() => ensureBuilt(), 300_000);

/** Exit within this bound or the test fails (a deadline, not a speed measurement). */
const EXIT_DEADLINE_MS = 10_000;

let dirs: HostDirs | undefined;
let host: RawHost | undefined;
afterEach(async () => {
  host?.kill('SIGKILL');
  if (dirs) await waitForNoMarkedProcesses(dirs.marker, 5_000);
  dirs?.cleanup();
  host = undefined;
  dirs = undefined;
});

async function exitWithin(child: RawHost, ms: number) {
  return Promise.race([waitForExit(child), new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), ms))]);
}

describe.each(['stdin EOF', 'SIGTERM'] as const)('on %s', (how) => {
  it('cancels the running call, kills its process tree, answers it and exits 0', async () => {
    dirs = makeHostDirs();
    host = spawnRawHost(dirs);
    const output = collectOutput(host);
    const child = host;
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await until(() => output.lines.length > 0, 'the initialize answer');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const marker = `${dirs.marker}-running`;
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleeper', arguments: { marker } } });
    expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);
    // The spawner that started the tool is the host's child; it must end with the host too.
    const spawners = findChildProcesses(child.pid ?? 0).filter((found) => found.cmdline.includes('sandbox/spawner.mjs'));
    expect(spawners).toHaveLength(1);

    if (how === 'stdin EOF') child.stdin.end();
    else child.kill('SIGTERM');

    expect(await exitWithin(child, EXIT_DEADLINE_MS)).toEqual({ code: 0, signal: null });
    expect(await waitForNoMarkedProcesses(dirs.marker, 5_000)).toEqual([]);
    expect(await pollUntil(() => ({ done: !isAlive(spawners[0]?.pid ?? 0), value: isAlive(spawners[0]?.pid ?? 0) }), 5_000)).toBe(false);
    const answer = output.lines.map((line) => JSON.parse(line) as { id?: unknown; result?: { isError?: boolean; _meta?: Record<string, { code?: string }> } }).find((message) => message.id === 2);
    expect(answer?.result?.isError).toBe(true);
    expect(answer?.result?._meta?.['toolhost/error']?.code).toBe('cancelled');
  });
});

describe('on SIGKILL', () => {
  it('starts its spawner with the host; killed, takes the spawner and the running tool along', async () => {
    dirs = makeHostDirs();
    host = spawnRawHost(dirs);
    const output = collectOutput(host);
    const child = host;
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await until(() => output.lines.length > 0, 'the initialize answer');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // Started with the host (it has process tools), before any call needs it.
    const findSpawners = () => findChildProcesses(child.pid ?? 0).filter((found) => found.cmdline.includes('sandbox/spawner.mjs'));
    const [spawner] = await pollUntil(() => ({ done: findSpawners().length > 0, value: findSpawners() }), 5_000);
    expect(spawner).toBeDefined();
    const marker = `${dirs.marker}-running`;
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleeper', arguments: { marker } } });
    expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);
    expect(findSpawners()).toEqual([spawner]);

    child.kill('SIGKILL');
    await waitForExit(child);
    expect(await waitForNoMarkedProcesses(dirs.marker, 5_000)).toEqual([]);
    expect(await pollUntil(() => ({ done: !isAlive(spawner?.pid ?? 0), value: isAlive(spawner?.pid ?? 0) }), 5_000)).toBe(false);
  });
});

describe('startup refusals', () => {
  it('a manifest that does not load: exit 1, file:line:col on stderr, nothing on stdout', async () => {
    dirs = makeHostDirs({ manifests: [join(REPO_ROOT, 'test/fixtures/manifests/bad/unknown-key')] });
    host = spawnRawHost(dirs);
    const output = collectOutput(host);
    expect(await exitWithin(host, EXIT_DEADLINE_MS)).toEqual({ code: 1, signal: null });
    // 'exit' can come before the last stderr bytes are read: wait for them, bounded.
    await until(() => /tool\.yaml:\d+:\d+: /.test(output.stderr()), 'the problem on stderr', 5_000);
    expect(output.rawStdout().length).toBe(0);
  });

  it('a bad --max-message-bytes is a usage error: exit 2', async () => {
    dirs = makeHostDirs({ extraArgs: ['--max-message-bytes', 'lots'] });
    host = spawnRawHost(dirs);
    expect(await exitWithin(host, EXIT_DEADLINE_MS)).toEqual({ code: 2, signal: null });
  });
});
