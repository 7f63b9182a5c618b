// The spawner process: it, not the host, forks every process tool; the pipes
// it hands over arrive whole even when the tool writes before the host holds
// them; a spawner that dies takes its tools along and is replaced; it ignores
// the terminal's and a group's signals (the host decides when it ends).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnTool } from '../../../src/runner/process/spawn.js';
import { buildSandboxArgv, START_LINE } from '../../../src/runner/bwrap/argv.js';
import { findMarkedProcesses, isAlive, pollUntil, waitForMarkedProcesses, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';
import { job, processSpec, runOptions, useRunnerTest } from '../../helpers/process-runner-test.js';
const t = useRunnerTest();
const services = t.services;

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function sleeper(): Promise<Awaited<ReturnType<typeof spawnTool>>> {
  return spawnTool(['/bin/sh', '-c', 'exec /bin/sleep 1000', t.marker], { TOOLHOST_TEST_MARKER: t.marker }, '/', services);
}

describe('spawner process', () => {
  it('hands the files a sandbox copies over on fds 5 and up, and an empty one for anything but a regular file', async () => {
    // A FIFO would block an ordinary open, and a device would be copied forever: both come across empty.
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-spawner-files-'));
    try {
      writeFileSync(join(dir, 'plain'), 'plain text');
      execFileSync('mkfifo', [join(dir, 'fifo')]);
      const files = [join(dir, 'plain'), join(dir, 'fifo'), '/dev/zero', join(dir, 'missing')];
      const script = 'for fd in 5 6 7 8; do printf "%s:" "$(cat <&$fd)"; done; [ -e /proc/self/fd/9 ] || echo end';
      const started = await services.spawner.spawn({ file: '/bin/sh', args: ['-c', script, t.marker], cwd: '/', env: {}, files });
      if (!started.ok) throw new Error(started.errorCode);
      let out = '';
      started.process.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      started.process.stdin.end();
      await new Promise((resolve) => started.process.stdout.once('close', resolve));
      expect(out).toBe('plain text::::end\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('forks the sandbox of a call, so the host itself never forks for a process tool', async () => {
    const runner = t.start({ command: ['/bin/sh', '-c', 'cat; exec /bin/sleep 1000', t.marker] });
    // close() ends the call: the deadline only bounds a failure.
    const pending = runner.run(job({ hello: 1 }), runOptions({ timeoutMs: 60_000 }));
    // The first marked process may be the tool's shell inside the sandbox: wait for the wrapper itself.
    const wrapper = await pollUntil(() => {
      const found = findMarkedProcesses(t.marker).find((entry) => entry.cmdline.startsWith('/usr/bin/bwrap'));
      return { done: found !== undefined, value: found };
    }, 30_000);
    expect(wrapper).toBeDefined();
    const spawner = services.spawner.pid;
    expect(spawner).toBeDefined();
    expect(spawner).not.toBe(process.pid);
    expect(parentOf(wrapper?.pid ?? 0)).toBe(spawner);
    // close() cancels the running call and stops the prepared sandbox.
    await runner.close();
    t.runner = undefined;
    expect((await pending).ok).toBe(false);
  });

  it('hands over every byte a tool writes before the host holds its pipes', async () => {
    for (let i = 0; i < 10; i++) {
      // No start gate here: the tool writes the moment it starts.
      const tool = await spawnTool(['/bin/sh', '-c', 'head -c 1000000 /dev/zero; head -c 70000 /dev/zero >&2'], {}, '/', services);
      let stdoutBytes = 0;
      let stderrBytes = 0;
      tool.stdout.on('data', (chunk: Buffer) => (stdoutBytes += chunk.length));
      tool.stderr.on('data', (chunk: Buffer) => (stderrBytes += chunk.length));
      tool.stdin.end();
      expect(await tool.ended).toEqual({ kind: 'exited', exitCode: 0, signal: null });
      expect([stdoutBytes, stderrBytes]).toEqual([1_000_000, 70_000]);
    }
  });

  it('takes its tools along when it is killed, and a new spawner serves the next tool', async () => {
    // A real sandbox: bubblewrap dies with its parent, the spawner.
    const spec = processSpec(t.marker, { command: ['/bin/sh', '-c', 'exec /bin/sleep 1000', t.marker] });
    const tool = await spawnTool([...buildSandboxArgv(spec, { services, cwd: '/tmp' }), ...(spec.command ?? [])], spec.env, '/tmp', services);
    tool.stdin.write(START_LINE);
    await waitForMarkedProcesses(t.marker, 3);
    expect(findMarkedProcesses(t.marker).length).toBeGreaterThan(0);
    const first = services.spawner.pid;
    process.kill(first ?? 0, 'SIGKILL');
    expect(await tool.ended).toEqual({ kind: 'exited', exitCode: null, signal: 'SIGKILL' });
    expect(await waitForNoMarkedProcesses(t.marker)).toEqual([]);

    const echo = await spawnTool(['/bin/cat'], {}, '/', services);
    let text = '';
    echo.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    echo.stdin.end('still here');
    expect(await echo.ended).toEqual({ kind: 'exited', exitCode: 0, signal: null });
    expect(text).toBe('still here');
    expect(services.spawner.pid).toBeDefined();
    expect(services.spawner.pid).not.toBe(first);
  });

  it('forgets every tool once it has ended (it reports its memory and live tools)', async () => {
    const tools = await Promise.all(Array.from({ length: 20 }, () => spawnTool(['/bin/sh', '-c', 'exit 0'], {}, '/', services)));
    for (const tool of tools) tool.stdin.end();
    await Promise.all(tools.map((tool) => tool.ended));
    const memory = await services.spawner.memory();
    expect(memory?.liveGroups).toBe(0);
    expect(memory?.usage.rss).toBeGreaterThan(0);
  });

  it('ignores SIGINT, SIGTERM and SIGHUP: a Ctrl-C to the terminal leaves the host in charge of its tools', async () => {
    const tool = await sleeper();
    const pid = services.spawner.pid ?? 0;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.kill(pid, signal);
    // The signals are pending the moment kill() returns, and a pending signal acts before the
    // spawner runs any more of its code: its answer to the next request proves it handled them.
    expect((await services.spawner.memory())?.liveGroups).toBeGreaterThan(0);
    expect(services.spawner.pid).toBe(pid);
    expect(isAlive(pid)).toBe(true);
    expect(findMarkedProcesses(t.marker).length).toBeGreaterThan(0);
    process.kill(-(tool.pid ?? 0), 'SIGKILL');
    expect((await tool.ended).kind).toBe('exited');
  });

  it("gives the tool the environment it was asked for and nothing of the host's", async () => {
    process.env['TOOLHOST_SPAWNER_TEST_SECRET'] = 'do-not-leak';
    try {
      const runner = t.start({ command: ['/bin/sh', '-c', 'env; cat > /dev/null', t.marker], stdout: 'text' });
      const outcome = await runner.run(job({}), runOptions());
      if (!outcome.ok || outcome.output.type !== 'text') throw new Error(`expected text output: ${JSON.stringify(outcome)}`);
      const env = Buffer.from(outcome.output.bytes).toString('utf8');
      expect(env).toContain(`TOOLHOST_TEST_MARKER=${t.marker}`);
      expect(env).not.toContain('do-not-leak');
      // The spawner itself holds nothing of the host's environment but PATH (Node adds its IPC channel's).
      const spawnerEnv = readFileSync(`/proc/${services.spawner.pid ?? 0}/environ`, 'latin1')
        .split('\0')
        .filter(Boolean);
      expect(spawnerEnv.map((entry) => entry.split('=')[0]).filter((name) => !name?.startsWith('NODE_CHANNEL_'))).toEqual(['PATH']);
    } finally {
      delete process.env['TOOLHOST_SPAWNER_TEST_SECRET'];
    }
  });
});
