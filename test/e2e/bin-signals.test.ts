// Ctrl-C through `node bin/toolhost.js` (the launch form of the client
// configurations of docs/clients.md), started in a process group of its own as
// a terminal starts a foreground job: a SIGINT to the group (once, or again
// while the host stops) must stop the host as it does when started directly:
// the call in flight answered `cancelled` and journaled so (not left
// `interrupted` for an operator), no process left behind, exit 0.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openJournal } from '../../src/audit/open-journal.js';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { findChildProcesses, isAlive, waitForMarkedProcesses, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { collectOutput, makeHostDirs, MARKER_ENV, until, waitForExit, type HostDirs, type RawHost } from '../helpers/host-session.js';

const BIN = join(REPO_ROOT, 'bin/toolhost.js');

beforeAll(() => ensureBuilt(), 300_000);

let dirs: HostDirs | undefined;
let wrapper: RawHost | undefined;
afterEach(async () => {
  if (wrapper?.pid !== undefined && wrapper.exitCode === null && wrapper.signalCode === null) process.kill(-wrapper.pid, 'SIGKILL');
  if (dirs) await waitForNoMarkedProcesses(dirs.marker);
  dirs?.cleanup();
  dirs = undefined;
  wrapper = undefined;
});

describe('SIGINT to the process group of `node bin/toolhost.js serve`', () => {
  // Once (a Ctrl-C), and again after the host began to stop (a second Ctrl-C), which must not
  // cut the clean stop short.
  it.each([
    ['once', 1],
    ['again while the host stops', 2],
  ])('%s: cancels the call in flight (answered and journaled cancelled, not interrupted) and exits 0', async (_name, signals) => {
    dirs = makeHostDirs();
    // Its own process group, as a terminal gives a foreground job.
    const child: RawHost = spawn(process.execPath, [BIN, 'serve', ...dirs.args], {
      detached: true,
      env: { ...process.env, [MARKER_ENV]: dirs.marker },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    wrapper = child;
    const output = collectOutput(child);
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await until(() => output.lines.length > 0, 'the initialize answer', 60_000);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // A mutating call, journaled before it runs, that hangs until stopped (its tool and a detached grandchild).
    const marker = `${dirs.marker}-running`;
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_writer', arguments: { marker } } });
    expect(await waitForMarkedProcesses(marker, 2)).toHaveLength(2);

    process.kill(-(child.pid ?? 0), 'SIGINT');
    if (signals === 2) {
      await until(() => output.stderr().includes('"msg":"shutting down"'), 'the host to begin stopping', 30_000);
      process.kill(-(child.pid ?? 0), 'SIGINT');
    }

    expect(await waitForExit(child)).toEqual({ code: 0, signal: null });
    await until(() => output.lines.some((line) => (JSON.parse(line) as { id?: unknown }).id === 2), 'the answer of the call', 5_000);
    const answer = output.lines
      .map((line) => JSON.parse(line) as { id?: unknown; result?: { isError?: boolean; _meta?: Record<string, { code?: string }> } })
      .find((message) => message.id === 2);
    expect(answer?.result?.isError).toBe(true);
    expect(answer?.result?._meta?.['toolhost/error']?.code).toBe('cancelled');
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
    const journal = await openJournal({ stateDir: dirs.stateDir, asHost: false });
    try {
      expect((await journal.query({ tool: 'slow_writer' })).map((record) => [record.status, record.errorCode])).toEqual([['cancelled', 'cancelled']]);
    } finally {
      await journal.close();
    }
  });
});

// `doctor` loads isolated-vm, so the wrapper re-executes node with --no-node-snapshot and
// stays as the parent: a client's SIGTERM to the pid it started reaches only the wrapper,
// which must pass it on to the host that does the work and end as that host ended, leaving
// neither behind.
describe('SIGTERM to the pid of `node bin/toolhost.js doctor` (re-executed with --no-node-snapshot)', () => {
  it('is relayed to the host, which ends, and the wrapper ends by the same signal', async () => {
    dirs = makeHostDirs();
    const child: RawHost = spawn(process.execPath, [BIN, 'doctor'], {
      detached: true,
      env: { ...process.env, [MARKER_ENV]: dirs.marker },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    wrapper = child;
    const output = collectOutput(child);
    let host: number | undefined;
    await until(
      () => {
        host = findChildProcesses(child.pid ?? 0).find((found) => found.cmdline.includes('--no-node-snapshot'))?.pid;
        return host !== undefined;
      },
      'the re-executed host',
      60_000,
    );

    child.kill('SIGTERM');

    expect(await waitForExit(child)).toEqual({ code: null, signal: 'SIGTERM' });
    await until(() => !isAlive(host ?? 0), 'the host to end', 10_000);
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
    // It ended by the signal, not by finishing its checks.
    expect(output.rawStdout().toString('utf8')).not.toMatch(/Every sandbox the bundled tools need works here/);
  });
});
