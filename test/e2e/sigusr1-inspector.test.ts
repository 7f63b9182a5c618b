// SIGUSR1 makes a Node process open its inspector on 127.0.0.1:9229, through
// which anything that can connect runs code in that process: in the host, past
// every policy and the journal; in the spawner, which starts every sandbox; in
// an isolate process, past isolated-vm. A process of the same user may send the
// signal even where ptrace is refused. Each of the three keeps the inspector
// closed and goes on serving, with `toolhost serve` started as users start it.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { findChildProcesses, isAlive } from '../helpers/proc-scan.js';
import { collectOutput, makeHostDirs, MARKER_ENV, until, waitForExit, waitForNoMarkedProcesses, type HostDirs, type RawHost } from '../helpers/host-session.js';

const BIN = join(REPO_ROOT, 'bin/toolhost.js');

beforeAll(() => ensureBuilt(), 300_000);

let dirs: HostDirs | undefined;
let host: RawHost | undefined;
afterEach(async () => {
  if (host?.pid !== undefined && host.exitCode === null && host.signalCode === null) host.kill('SIGKILL');
  if (dirs) await waitForNoMarkedProcesses(dirs.marker, 15_000, { killSurvivors: true });
  dirs?.cleanup();
  dirs = undefined;
  host = undefined;
});

/** Every descendant of `pid`, found from /proc. */
function descendantsOf(pid: number): { pid: number; cmdline: string }[] {
  const children = findChildProcesses(pid);
  return children.flatMap((child) => [child, ...descendantsOf(child.pid)]);
}

/** The TCP ports `pid` listens on: its socket descriptors matched against its network namespace's LISTEN entries. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1] !== undefined) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex, st 0A is LISTEN, the inode is the tenth field.
      if (fields[3] === '0A' && fields[9] !== undefined && inodes.has(fields[9])) ports.push(Number.parseInt(fields[1]?.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

describe('SIGUSR1 to the host, its spawner and an isolate process', () => {
  it('opens no inspector in any of them, and the host goes on answering', async () => {
    dirs = makeHostDirs();
    const child: RawHost = spawn(process.execPath, [BIN, 'serve', ...dirs.args], { env: { ...process.env, [MARKER_ENV]: dirs.marker }, stdio: ['pipe', 'pipe', 'pipe'] });
    host = child;
    const output = collectOutput(child);
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const answerOf = async (id: number) => {
      await until(() => output.lines.some((line) => (JSON.parse(line) as { id?: unknown }).id === id), `the answer to ${id}`, 60_000);
      return output.lines.map((line) => JSON.parse(line) as { id?: unknown; result?: { isError?: boolean; structuredContent?: unknown } }).find((message) => message.id === id);
    };
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await answerOf(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // An isolate call, so that the spawner and the echo tool's isolate process are running.
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'before' } } });
    expect(JSON.stringify(await answerOf(2))).toContain('before');

    const hostPid = child.pid ?? 0;
    // Node processes only: the bubblewrap around an isolate process names its script too.
    const nodes = descendantsOf(hostPid).filter(
      ({ cmdline }) => cmdline.startsWith(`${process.execPath} `) && (cmdline.includes('spawner.mjs') || cmdline.includes('isolate-process.mjs')),
    );
    expect(
      nodes.some(({ cmdline }) => cmdline.includes('spawner.mjs')),
      JSON.stringify(nodes),
    ).toBe(true);
    expect(
      nodes.some(({ cmdline }) => cmdline.includes('isolate-process.mjs')),
      JSON.stringify(nodes),
    ).toBe(true);
    const targets = [hostPid, ...nodes.map(({ pid }) => pid)];
    for (const pid of targets) expect(listeningPorts(pid), `${pid} before the signal`).toEqual([]);

    for (const pid of targets) process.kill(pid, 'SIGUSR1');
    // Node opens the inspector on its next turn; a call answered after the signal comes later still.
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'after' } } });
    expect(JSON.stringify(await answerOf(3))).toContain('after');
    await new Promise((resolve) => setTimeout(resolve, 500));

    for (const pid of targets) {
      expect(isAlive(pid), `${pid} alive`).toBe(true);
      expect(listeningPorts(pid), `${pid} after SIGUSR1`).toEqual([]);
    }
    expect(output.stderr()).not.toContain('Debugger listening');

    child.stdin.end();
    expect(await waitForExit(child)).toEqual({ code: 0, signal: null });
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
  });
});
