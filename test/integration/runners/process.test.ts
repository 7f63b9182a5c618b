// One-shot process runner against hostile fixtures. Every process is tagged
// with the test's marker; after each test a /proc scan proves none remains.
import { getEventListeners } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../../src/runner/process/process-runner.js';
import { MAX_GRACE_MS } from '../../../src/runner/process/kill.js';
import { createSilentLogger } from '../../../src/log.js';
import type { Runner } from '../../../src/runner/types.js';
import { SANDBOX_DEFAULT_PATH } from '../../../src/runner/bwrap/argv.js';
import { STDERR_TAIL_BYTES } from '../../../src/runner/process/output-cap.js';
import { findMarkedProcesses, pollUntil, waitForNoCallProcesses } from '../../helpers/proc-scan.js';
import { FIXTURES_DIR, job, newWorkdir, processSpec, runOptions, useRunnerTest } from '../../helpers/process-runner-test.js';
import { failureOf, jsonTextOf } from '../../helpers/run-outcomes.js';
import { until, waitForLineIn } from '../../helpers/wait.js';

const t = useRunnerTest();
const services = t.services;

// The next normal call on the same runner works: the failure left nothing broken.
async function expectNextCallWorks(target: Runner): Promise<void> {
  const outcome = await target.run(job({ mode: 'echo', n: 1 }), runOptions());
  expect(JSON.parse(jsonTextOf(outcome))).toMatchObject({ received: { mode: 'echo', n: 1 } });
}

describe('process runner, one-shot', () => {
  it('passes the arguments on stdin and returns stdout as JSON text, in the first root', async () => {
    const workdir = newWorkdir();
    const tool = t.start({ roots: [{ path: workdir, access: 'read' }] });
    const outcome = await tool.run(job({ mode: 'echo', value: 'héllo' }), runOptions());
    expect(JSON.parse(jsonTextOf(outcome))).toEqual({ received: { mode: 'echo', value: 'héllo' }, cwd: workdir });
  });

  it('runs in a fresh private directory, removed afterwards, when the tool has no root', async () => {
    const tool = t.start({ roots: [] });
    const { cwd } = JSON.parse(jsonTextOf(await tool.run(job({ mode: 'echo' }), runOptions()))) as { cwd: string };
    expect(cwd).toContain('toolhost-proc-');
    // Removed after the answer, in the background (it is not on the call's path).
    await until(() => !existsSync(cwd), 'the private directory to be removed');
  });

  it('returns stdout: text as raw bytes', async () => {
    const tool = t.start({ stdout: 'text' });
    const outcome = await tool.run(job({ mode: 'text' }), runOptions());
    if (!outcome.ok || outcome.output.type !== 'text') throw new Error('expected text output');
    expect(Buffer.from(outcome.output.bytes).toString('utf8')).toBe('plain text, ünïcode\n');
  });

  it('times out `sleep 1000` and kills it', async () => {
    const tool = t.start({ command: ['/bin/sh', '-c', 'exec /bin/sleep 1000', t.marker] });
    const outcome = await tool.run(job({}), runOptions({ timeoutMs: 300 }));
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 300 } });
    expect(await waitForNoCallProcesses(t.marker)).toEqual([]);
  });

  it('kills a TERM-trapping shell and its setsid double-forked grandchild on timeout', async () => {
    const workdir = newWorkdir();
    const tool = t.start({ command: ['/bin/sh', join(FIXTURES_DIR, 'trap-term-grandchild.sh'), t.marker], roots: [{ path: workdir, access: 'read_write' }] });
    // The deadline must come after the fixture is ready: generous for a loaded machine.
    const pending = tool.run(job({}), runOptions({ timeoutMs: 8000 }));
    // Readiness: the fixture writes ./ready after its grandchild has left the session.
    expect(await waitForLineIn(join(workdir, 'ready'))).toBe(`ready ${t.marker}\n`);
    const grandchild = await waitForGrandchild(t.marker);
    expect(grandchild).toHaveLength(1);
    // The grandchild is in another session and process group than the tool's wrapper.
    const wrapper = findMarkedProcesses(t.marker).find((found) => found.cmdline.startsWith('/usr/bin/bwrap'));
    expect(wrapper).toBeDefined();
    expect(sessionOf(grandchild[0]?.pid ?? 0)).not.toBe(sessionOf(wrapper?.pid ?? 0));

    const outcome = await pending;
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 8000 } });
    expect(await waitForNoCallProcesses(t.marker)).toEqual([]);
    await expectNextCallWorksWith(t.marker);
  });

  it('gives the tool SIGTERM and its grace before the kill on timeout', async () => {
    const workdir = newWorkdir();
    const script = "trap 'echo term > ./got-term; exit 0' TERM; echo ready > ./ready; while :; do /bin/sleep 0.05; done";
    // The longest grace (the tool exits on TERM, so it ends early): a loaded machine may take a while to run the trap.
    // The deadline comes after the script is ready.
    const tool = t.start({ command: ['/bin/sh', '-c', script, t.marker], roots: [{ path: workdir, access: 'read_write' }] }, { graceMs: MAX_GRACE_MS });
    const outcome = await tool.run(job({}), runOptions({ timeoutMs: 8000 }));
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 8000 } });
    expect(existsSync(join(workdir, 'ready'))).toBe(true);
    expect(readFileSync(join(workdir, 'got-term'), 'utf8')).toBe('term\n');
  });

  it('stops a stdout flood at the cap without buffering it all', async () => {
    const floodCapBytes = 1 << 20;
    const tool = t.start({ command: ['/usr/bin/yes', t.marker], floodCapBytes });
    const { code, details } = failureOf(await tool.run(job({}), runOptions()));
    expect(code).toBe('output_limit');
    expect(details['reason']).toBe('flood_cap');
    expect(details['limit']).toBe(floodCapBytes);
    // Counting stops at the first chunk past the cap (a pipe chunk is at most 64 KiB).
    expect(details['bytes']).toBeGreaterThan(floodCapBytes);
    expect(details['bytes']).toBeLessThanOrEqual(floodCapBytes + 65_536);
  });

  it('counts stderr against the same cap', async () => {
    const tool = t.start({ floodCapBytes: 256 * 1024 });
    const { code, details } = failureOf(await tool.run(job({ mode: 'flood-stderr' }), runOptions()));
    expect(code).toBe('output_limit');
    expect(details['limit']).toBe(256 * 1024);
    await expectNextCallWorks(t.runner as Runner);
  });

  it('refuses stdout that is not UTF-8 as invalid_output', async () => {
    const tool = t.start({});
    expect(failureOf(await tool.run(job({ mode: 'invalid-utf8' }), runOptions()))).toEqual({
      code: 'invalid_output',
      details: { reason: 'invalid_utf8', bytes: 5 },
    });
    await expectNextCallWorks(tool);
  });

  it('passes duplicate-key JSON through as text for the supervisor to refuse', async () => {
    const tool = t.start({});
    expect(jsonTextOf(await tool.run(job({ mode: 'duplicate-keys' }), runOptions()))).toBe('{"a":1,"a":2}');
    await expectNextCallWorks(tool);
  });

  it('passes JSON nested 100,000 deep through as text without overflowing the stack', async () => {
    const tool = t.start({});
    const json = jsonTextOf(await tool.run(job({ mode: 'deep' }), runOptions()));
    expect(json.length).toBe(200_000);
    expect(json.startsWith('[[[[')).toBe(true);
    await expectNextCallWorks(tool);
  });

  it('reports a non-zero exit as tool_error with a bounded stderr tail', async () => {
    const tool = t.start({});
    const { code, details } = failureOf(await tool.run(job({ mode: 'fail' }), runOptions()));
    expect(code).toBe('tool_error');
    expect(details['exitCode']).toBe(3);
    const tail = details['stderrTail'];
    expect(typeof tail).toBe('string');
    expect((tail as string).endsWith('the-end-of-stderr\n')).toBe(true);
    // Bounded here; the supervisor redacts it, then cuts it to what the caller sees.
    expect(Buffer.byteLength(tail as string)).toBeLessThanOrEqual(STDERR_TAIL_BYTES);
    await expectNextCallWorks(tool);
  });

  it('reports a crash by signal as tool_crashed', async () => {
    const tool = t.start({});
    const { code, details } = failureOf(await tool.run(job({ mode: 'segv' }), runOptions()));
    expect(code).toBe('tool_crashed');
    expect(details['signal']).toBe('SIGSEGV');
    await expectNextCallWorks(tool);
  });

  it('cancels through the AbortSignal and kills the whole tree', async () => {
    const workdir = newWorkdir();
    const tool = t.start({ command: ['/bin/sh', join(FIXTURES_DIR, 'trap-term-grandchild.sh'), t.marker], roots: [{ path: workdir, access: 'read_write' }] });
    const controller = new AbortController();
    const pending = tool.run(job({}), runOptions({ signal: controller.signal }));
    expect(await waitForLineIn(join(workdir, 'ready'))).toBe(`ready ${t.marker}\n`);
    expect(await waitForGrandchild(t.marker)).toHaveLength(1);
    controller.abort();
    expect(failureOf(await pending)).toEqual({ code: 'cancelled', details: {} });
    expect(await waitForNoCallProcesses(t.marker)).toEqual([]);
  });

  it('leaves no listener on a long-lived signal shared by many calls', async () => {
    const tool = t.start({});
    const shared = new AbortController().signal;
    for (let i = 0; i < 3; i++) {
      const options = runOptions({ signal: shared });
      expect((await tool.run(job({ mode: 'echo' }), options)).ok).toBe(true);
      // The supervisor disposes each call's control; the runner itself holds nothing on its signals.
      expect(getEventListeners(options.control.signal, 'abort')).toHaveLength(0);
      options.control.dispose();
    }
    expect(getEventListeners(shared, 'abort')).toHaveLength(0);
  });

  it('answers cancelled without spawning when the signal is already aborted', async () => {
    const tool = t.start({ command: ['/bin/sh', '-c', 'exec /bin/sleep 1000', t.marker] });
    const controller = new AbortController();
    controller.abort();
    expect(failureOf(await tool.run(job({}), runOptions({ signal: controller.signal }))).code).toBe('cancelled');
    expect(findMarkedProcesses(t.marker)).toEqual([]);
  });

  it('kills background jobs the tool leaves behind when it exits', async () => {
    const tool = t.start({});
    expect(JSON.parse(jsonTextOf(await tool.run(job({ mode: 'background-then-exit' }), runOptions())))).toEqual({ ok: true });
    expect(await waitForNoCallProcesses(t.marker)).toEqual([]);
  });

  it('hides the host environment: only the spec env reaches the tool', async () => {
    const secret = `secret-${t.marker}`;
    process.env['TOOLHOST_TEST_SECRET_TOKEN'] = secret;
    try {
      const tool = t.start({ env: { TOOLHOST_TEST_MARKER: t.marker, LANG: 'C.UTF-8' } });
      const json = jsonTextOf(await tool.run(job({ mode: 'env' }), runOptions()));
      expect(json).not.toContain(secret);
      const env = JSON.parse(json) as Record<string, string>;
      expect(env['TOOLHOST_TEST_SECRET_TOKEN']).toBeUndefined();
      expect(env['TOOLHOST_TEST_MARKER']).toBe(t.marker);
      expect(env['LANG']).toBe('C.UTF-8');
      // The sandbox adds a default PATH when the spec has none, and the shell that joins
      // the pids cgroup may export PWD (the working directory); nothing else from the host.
      expect(env['PATH']).toBe(SANDBOX_DEFAULT_PATH);
      expect(
        Object.keys(env)
          .filter((name) => name !== 'PWD')
          .sort(),
      ).toEqual(['LANG', 'PATH', 'TOOLHOST_TEST_MARKER']);
    } finally {
      delete process.env['TOOLHOST_TEST_SECRET_TOKEN'];
    }
  });

  it('gives the tool only file descriptors 0, 1 and 2', async () => {
    const tool = t.start({ command: ['/usr/bin/python3', join(FIXTURES_DIR, 'list-fds.py'), t.marker] });
    expect(JSON.parse(jsonTextOf(await tool.run(job({}), runOptions())))).toEqual([0, 1, 2]);
  });

  it('runs the tool inside the namespace sandbox when the manifest asks for it', async () => {
    const workdir = newWorkdir();
    const tool = t.start({ isolation: 'namespace', roots: [{ path: workdir, access: 'read' }] });
    expect(JSON.parse(jsonTextOf(await tool.run(job({ mode: 'echo' }), runOptions())))).toEqual({ received: { mode: 'echo' }, cwd: workdir });
  });

  it('fails closed with sandbox_unavailable when bubblewrap is missing, and starts nothing', async () => {
    const runner = t.start({}, { bwrapPath: `/nonexistent/${t.marker}/bwrap` });
    const { code, details } = failureOf(await runner.run(job({ mode: 'echo' }), runOptions()));
    expect(code).toBe('sandbox_unavailable');
    expect(typeof details['reason']).toBe('string');
    expect(findMarkedProcesses(t.marker)).toEqual([]);
  });
});

// The double-forked grandchild, once it has exec'd its sleep.
async function waitForGrandchild(currentMarker: string): Promise<ReturnType<typeof findMarkedProcesses>> {
  return pollUntil(() => {
    const found = findMarkedProcesses(currentMarker).filter((candidate) => candidate.cmdline === '/bin/sleep 1001');
    return { done: found.length > 0, value: found };
  }, 10_000);
}

function sessionOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3] ?? '';
}

async function expectNextCallWorksWith(currentMarker: string): Promise<void> {
  const tool = createProcessRunner(processSpec(currentMarker, {}), { logger: createSilentLogger(), services });
  try {
    await expectNextCallWorks(tool);
  } finally {
    await tool.close();
  }
}
