// SIGUSR1 makes a Node process open its inspector on 127.0.0.1:9229, through
// which anything that can connect runs code in that process: in the host, past
// every policy and the journal; in the spawner, which starts every sandbox; in
// an isolate process, past isolated-vm. A process of the same user may send the
// signal even where ptrace is refused. Each of the three keeps the inspector
// closed and goes on serving, with `toolhost serve` started as users start it:
// signalled once it serves, and signalled while Node starts, before any line of
// toolhost's code can ignore the signal.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { constants } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { isAlive } from '../helpers/proc-scan.js';
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

const SIGUSR1_BIT = 1n << BigInt(constants.signals.SIGUSR1 - 1);
/** The Node programs the host starts. */
const HELPER_SCRIPTS = ['spawner.mjs', 'isolate-process.mjs', 'handle-echo.mjs'];

/** The children of `pid`, from each of its threads' /proc children list (cheap enough to poll every millisecond). */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
        .split(' ')
        .filter((field) => field !== '')
        .map(Number),
    );
  } catch {
    return [];
  }
}

/** `root` and every process under it, each with its parent. */
function processTree(root: number): { pid: number; parent?: number }[] {
  const tree: { pid: number; parent?: number }[] = [{ pid: root }];
  for (let index = 0; index < tree.length; index += 1) {
    const parent = tree[index]?.pid ?? 0;
    tree.push(...childPids(parent).map((pid) => ({ pid, parent })));
  }
  return tree;
}

function readProcCmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return undefined;
  }
}

/**
 * The command line of `pid` once it runs `scripts` in Node (after its exec) and Node has installed
 * a handler for SIGUSR1: from then on the signal reaches Node, not the default action that ends
 * the process. Left alone: `env` before it execs node, bubblewrap, and a child forked by the host
 * or the spawner that has not exec'd yet (it still runs its parent's program, as its command line
 * shows, with its parent's handlers gone: a signal would end it).
 */
function nodeCatchingSigusr1(pid: number, scripts: readonly string[], parentCmdline: string | undefined): string | undefined {
  try {
    if (!basename(readlinkSync(`/proc/${pid}/exe`)).startsWith('node')) return undefined;
    const cmdline = readProcCmdline(pid) ?? '';
    if (!scripts.some((script) => cmdline.includes(script)) || cmdline === parentCmdline) return undefined;
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return caught !== undefined && (BigInt(`0x${caught}`) & SIGUSR1_BIT) !== 0n ? cmdline : undefined;
  } catch {
    return undefined; // gone, or not yet readable
  }
}

/**
 * Sends SIGUSR1 once to `root` and to each Node process of toolhost's under it, as soon as Node
 * catches the signal, that is, while Node starts, before toolhost's own code runs; until stopped.
 * Returns what it signalled: pid to command line.
 */
function signalEachStart(root: number): { signalled: Map<number, string>; stop: () => Promise<void> } {
  const signalled = new Map<number, string>();
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      for (const { pid, parent } of processTree(root)) {
        if (signalled.has(pid)) continue;
        const parentCmdline = parent === undefined ? undefined : readProcCmdline(parent);
        const cmdline = nodeCatchingSigusr1(pid, pid === root ? ['toolhost.js'] : HELPER_SCRIPTS, parentCmdline);
        if (cmdline === undefined) continue;
        process.kill(pid, 'SIGUSR1');
        signalled.set(pid, cmdline);
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  return {
    signalled,
    stop: async () => {
      isStopped = true;
      await loop;
    },
  };
}

/** A raw-line MCP session with `toolhost serve` started from bin/toolhost.js, `command` first (node, or the script itself by its shebang). */
function startServe(command: readonly string[]) {
  dirs = makeHostDirs();
  const [file = '', ...args] = command;
  const child: RawHost = spawn(file, [...args, 'serve', ...dirs.args], { env: { ...process.env, [MARKER_ENV]: dirs.marker }, stdio: ['pipe', 'pipe', 'pipe'] });
  host = child;
  const output = collectOutput(child);
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const answerOf = async (id: number) => {
    await until(() => output.lines.some((line) => (JSON.parse(line) as { id?: unknown }).id === id), `the answer to ${id}`, 60_000);
    return output.lines.map((line) => JSON.parse(line) as { id?: unknown; result?: { isError?: boolean; structuredContent?: unknown } }).find((message) => message.id === id);
  };
  const initialize = async () => {
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await answerOf(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  };
  const echo = async (id: number, text: string) => {
    send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } });
    expect(JSON.stringify(await answerOf(id))).toContain(text);
  };
  return { child, output, initialize, echo };
}

describe('SIGUSR1 to the host, its spawner and an isolate process', () => {
  it('opens no inspector in any of them, and the host goes on answering', async () => {
    const { child, output, initialize, echo } = startServe([process.execPath, BIN]);
    await initialize();
    // An isolate call, so that the spawner and the echo tool's isolate process are running.
    await echo(2, 'before');

    const hostPid = child.pid ?? 0;
    // Node processes only: the bubblewrap around an isolate process names its script too.
    const descendants = processTree(hostPid)
      .slice(1)
      .map(({ pid }) => ({ pid, cmdline: readProcCmdline(pid) ?? '' }));
    const nodes = descendants.filter(({ cmdline }) => cmdline.startsWith(`${process.execPath} `) && (cmdline.includes('spawner.mjs') || cmdline.includes('isolate-process.mjs')));
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
    await echo(3, 'after');
    await new Promise((resolve) => setTimeout(resolve, 500));

    for (const pid of targets) {
      expect(isAlive(pid), `${pid} alive`).toBe(true);
      expect(listeningPorts(pid), `${pid} after SIGUSR1`).toEqual([]);
    }
    expect(output.stderr()).not.toContain('Debugger listening');

    child.stdin.end();
    expect(await waitForExit(child)).toEqual({ code: 0, signal: null });
    expect(await waitForNoMarkedProcesses(dirs?.marker ?? '')).toEqual([]);
  });

  it('opens none when the signal comes while each of them starts, before its own code runs', async () => {
    // Started as npm's link starts it: the script itself, by its shebang.
    const { child, output, initialize, echo } = startServe([BIN]);
    const signaller = signalEachStart(child.pid ?? 0);
    await initialize();
    await echo(2, 'while starting');
    await until(() => [...signaller.signalled.values()].some((cmdline) => cmdline.includes('isolate-process.mjs')), 'an isolate process signalled', 30_000);
    await echo(3, 'after');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await signaller.stop();

    const signalled = [...signaller.signalled];
    const description = JSON.stringify(signalled);
    for (const script of ['toolhost.js', 'spawner.mjs', 'isolate-process.mjs']) {
      expect(
        signalled.some(([, cmdline]) => cmdline.includes(script)),
        `${script} in ${description}`,
      ).toBe(true);
    }
    // Each signalled while it started, and still serving: the signal neither opened nor ended it.
    expect(
      signalled.some(([pid, cmdline]) => cmdline.includes('isolate-process.mjs') && isAlive(pid)),
      description,
    ).toBe(true);
    for (const [pid, cmdline] of signalled) {
      if (!isAlive(pid)) continue; // an isolate process started ahead and since replaced, say
      expect(listeningPorts(pid), `${cmdline} after SIGUSR1 while it started`).toEqual([]);
    }
    expect(isAlive(child.pid ?? 0)).toBe(true);
    expect(output.stderr()).not.toContain('Debugger listening');

    child.stdin.end();
    expect(await waitForExit(child)).toEqual({ code: 0, signal: null });
    expect(await waitForNoMarkedProcesses(dirs?.marker ?? '')).toEqual([]);
  });
});
