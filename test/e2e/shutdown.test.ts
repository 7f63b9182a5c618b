// How `toolhost serve` ends: stdin EOF or SIGTERM with a process tool running
// cancels it (its whole process tree dies), answers it `cancelled`, closes
// the journal and exits 0 within a bounded time, leaving no process behind.
// A configuration that does not load exits 1 with file:line:col lines.
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openJournal } from '../../src/audit/open-journal.js';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { findChildProcesses, isAlive, pollUntil, waitForMarkedProcesses, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { collectOutput, makeHostDirs, spawnRawHost, until, waitForExit, type HostDirs, type RawHost } from '../helpers/host-session.js';

beforeAll(() => ensureBuilt(), 300_000);

/**
 * Exit within this bound or the test fails (a deadline, not a speed measurement): generous,
 * since it also covers Node's start and loading the host on a loaded machine.
 */
const EXIT_DEADLINE_MS = 30_000;

let dirs: HostDirs | undefined;
let host: RawHost | undefined;
afterEach(async () => {
  host?.kill('SIGKILL');
  if (dirs) await waitForNoMarkedProcesses(dirs.marker);
  dirs?.cleanup();
  host = undefined;
  dirs = undefined;
});

async function exitWithin(child: RawHost, ms: number) {
  return Promise.race([waitForExit(child), new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), ms))]);
}

/** A raw host that answered `initialize` (id 1): its output and a line sender. */
async function startInitializedHost(hostDirs: HostDirs) {
  const child = spawnRawHost(hostDirs);
  host = child;
  const output = collectOutput(child);
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  await until(() => output.lines.length > 0, 'the initialize answer');
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { child, output, send };
}

/** A raw host, initialized, with a `sleeper` call running (its processes seen in /proc). */
async function startSleeperCall(hostDirs: HostDirs) {
  const { child, output, send } = await startInitializedHost(hostDirs);
  // serve starts its spawner with the host when it has process tools, before any call needs it.
  const spawners = await pollUntil(() => ({ done: findSpawners(child).length > 0, value: findSpawners(child) }), 15_000);
  const marker = `${hostDirs.marker}-running`;
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleeper', arguments: { marker } } });
  expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);
  return { child, output, spawners };
}

function findSpawners(child: RawHost) {
  return findChildProcesses(child.pid ?? 0).filter((found) => found.cmdline.includes('src/runner/host-helpers/spawner.mjs'));
}

async function expectGone(pid: number | undefined): Promise<void> {
  expect(await pollUntil(() => ({ done: !isAlive(pid ?? 0), value: isAlive(pid ?? 0) }), 15_000)).toBe(false);
}

describe.each(['stdin EOF', 'SIGTERM'] as const)('on %s', (how) => {
  it('cancels the running call, kills its process tree, answers it and exits 0', async () => {
    dirs = makeHostDirs();
    const { child, output, spawners } = await startSleeperCall(dirs);
    // One spawner, the host's child, which started the tool: it must end with the host too.
    expect(spawners).toHaveLength(1);
    expect(findSpawners(child)).toEqual(spawners);

    if (how === 'stdin EOF') child.stdin.end();
    else child.kill('SIGTERM');

    expect(await exitWithin(child, EXIT_DEADLINE_MS)).toEqual({ code: 0, signal: null });
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
    await expectGone(spawners[0]?.pid);
    const answer = output.lines
      .map((line) => JSON.parse(line) as { id?: unknown; result?: { isError?: boolean; _meta?: Record<string, { code?: string }> } })
      .find((message) => message.id === 2);
    expect(answer?.result?.isError).toBe(true);
    expect(answer?.result?._meta?.['toolhost/error']?.code).toBe('cancelled');
  });
});

// Read-only calls' records are committed in batches a few ms after their answers
// (src/audit/record-batch.ts), and log lines are written off the event loop; a
// graceful stop writes every one of both before it exits.
describe.each(['stdin EOF', 'SIGTERM'] as const)('read-only records on %s', (how) => {
  it('every answered read-only call is in the journal after the host exits', async () => {
    dirs = makeHostDirs();
    const { child, output, send } = await startInitializedHost(dirs);
    const calls = 40;
    for (let i = 0; i < calls; i++) send({ jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'echo', arguments: { n: i } } });
    const answers = () => output.lines.filter((line) => (JSON.parse(line) as { id?: unknown }).id !== 1).length;
    await until(() => answers() === calls, 'every answer', 30_000);

    if (how === 'stdin EOF') child.stdin.end();
    else child.kill('SIGTERM');
    expect(await exitWithin(child, EXIT_DEADLINE_MS)).toEqual({ code: 0, signal: null });

    // The log is written off the event loop (serve's asynchronous pino destination): a graceful
    // stop still writes every line, the last one ('stopped') included. 'exit' can come before
    // the last stderr bytes are read: wait for them, bounded.
    const logged = (message: string) =>
      output
        .stderr()
        .split('\n')
        .filter((line) => line.includes(`"msg":"${message}"`)).length;
    await until(() => logged('stopped') === 1, 'the last log line', 5_000);
    expect(logged('call completed')).toBe(calls);

    const journal = await openJournal({ stateDir: dirs.stateDir, asHost: false });
    try {
      const records = await journal.query({ tool: 'echo' });
      expect(records).toHaveLength(calls);
      expect(records.every((record) => record.status === 'completed' && record.sideEffect === 'read_only')).toBe(true);
    } finally {
      await journal.close();
    }
  });
});

describe('on SIGKILL', () => {
  it('takes its spawner and the running tool along', async () => {
    dirs = makeHostDirs();
    const { child, spawners } = await startSleeperCall(dirs);
    expect(spawners).toHaveLength(1);

    child.kill('SIGKILL');
    await waitForExit(child);
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
    await expectGone(spawners[0]?.pid);
  });
});

describe('startup refusals', () => {
  it('a manifest that does not load: exit 1, file:line:col on stderr, nothing on stdout', async () => {
    dirs = makeHostDirs({ manifests: [join(REPO_ROOT, 'test/fixtures/manifests/bad/unknown-key')] });
    host = spawnRawHost(dirs);
    const output = collectOutput(host);
    expect(await exitWithin(host, EXIT_DEADLINE_MS)).toEqual({ code: 1, signal: null });
    // 'exit' can come before the last stderr bytes are read: wait for them, bounded.
    await until(() => /tool\.yaml:\d+:\d+: /.test(output.stderr()), 'the problem on stderr', 15_000);
    expect(output.rawStdout().length).toBe(0);
  });

  it('a bad --max-message-bytes is a usage error: exit 2', async () => {
    dirs = makeHostDirs({ extraArgs: ['--max-message-bytes', 'lots'] });
    host = spawnRawHost(dirs);
    expect(await exitWithin(host, EXIT_DEADLINE_MS)).toEqual({ code: 2, signal: null });
  });
});
