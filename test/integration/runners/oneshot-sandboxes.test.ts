// One-shot tools get the next call's sandbox started while the current call
// runs. Proven here: no tool code runs before its call (the start gate), each
// call still has a sandbox of its own, a prepared sandbox that died or was
// built for another timeout is not used, and none outlives close() or its idle time.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { createProcessRunner } from '../../../src/runner/process/process-runner.js';
import { ProcessServices } from '../../../src/runner/index.js';
import type { Runner } from '../../../src/runner/types.js';
import { findMarkedProcesses, isBlockedReadingStdin, pollUntil, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';
import { until } from '../../helpers/wait.js';
import { jsonTextOf } from '../../helpers/run-outcomes.js';
import { job, newWorkdir, processSpec, runOptions, useRunnerTest } from '../../helpers/process-runner-test.js';
const t = useRunnerTest();
const services = t.services;

/** The shells waiting at a start gate with this test's marker: one per prepared sandbox. */
function gateShells(): number[] {
  return findMarkedProcesses(t.marker)
    .filter((found) => /^\S*(sh|dash) -c .*read -r start && exec "\$@"/.test(found.cmdline))
    .map((found) => found.pid);
}

async function waitForPreparedSandbox(): Promise<number[]> {
  return pollUntil(() => {
    const shells = gateShells();
    return { done: shells.length > 0, value: shells };
  }, 10_000);
}

// Appends one line to ./started at its very start, then echoes its arguments.
const COUNTING_TOOL = ['/bin/sh', '-c', 'echo started >> ./started; exec cat', 'marker-arg'];

function startedCount(workdir: string): number {
  try {
    return readFileSync(join(workdir, 'started'), 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

describe('one-shot sandboxes prepared ahead', () => {
  it('runs no tool code before its call: the prepared sandbox waits at its start gate', async () => {
    const workdir = newWorkdir();
    const tool = t.start({ command: [...COUNTING_TOOL, t.marker], roots: [{ path: workdir, access: 'read_write' }] });
    expect(jsonTextOf(await tool.run(job({ call: 1 }), runOptions()))).toBe('{"call":1}');
    const gates = await waitForPreparedSandbox();
    expect(gates).toHaveLength(1);
    // The prepared sandbox's shell sleeps in read(0): it waits at its gate, so its tool has not run.
    expect(await pollUntil(() => ({ done: isBlockedReadingStdin(gates[0]!), value: isBlockedReadingStdin(gates[0]!) }), 10_000)).toBe(true);
    expect(startedCount(workdir)).toBe(1);
    // The tool reads exactly its arguments: the start line stays with the gate.
    expect(jsonTextOf(await tool.run(job({ call: 2 }), runOptions()))).toBe('{"call":2}');
    expect(startedCount(workdir)).toBe(2);
  });

  it('still gives every call a sandbox of its own: private workdir, /tmp and pid namespace', async () => {
    const script =
      'cat > /dev/null; [ -e /tmp/seen ] && echo reused; echo x > /tmp/seen; [ -z "$(ls -A)" ] || echo dirty; echo y > left || echo unwritable; printf "%s %s" "$(pwd)" "$$"';
    const tool = t.start({ command: ['/bin/sh', '-c', script, t.marker], stdout: 'text', isolation: 'namespace' });
    const outputs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const outcome = await tool.run(job({}), runOptions());
      if (!outcome.ok || outcome.output.type !== 'text') throw new Error(`expected text output: ${JSON.stringify(outcome)}`);
      outputs.push(Buffer.from(outcome.output.bytes).toString('utf8'));
    }
    // Each starts in an empty, writable directory of its own (made in the sandbox's private /tmp).
    for (const output of outputs) expect(output).not.toMatch(/reused|dirty|unwritable/);
    // A fresh private directory each time; the gate shell's pid inside a new namespace is small.
    const workdirs = outputs.map((output) => output.split(' ')[0] ?? '');
    expect(new Set(workdirs).size).toBe(3);
    // Each is removed after its call's answer, in the background: none outlives close().
    await tool.close();
    t.runner = undefined;
    expect(workdirs.filter((dir) => existsSync(dir))).toEqual([]);
  });

  it('removes the pids cgroup of every sandbox once it has ended, used or stopped, without waiting for the sweep', async () => {
    // A sweep that never comes within the test: whatever is gone, the runner removed.
    const own = new ProcessServices({ cgroupSweepIntervalMs: 3_600_000 });
    try {
      const tool = t.start({ command: ['/bin/sh', '-c', 'exec cat', t.marker] }, { services: own });
      for (let call = 1; call <= 3; call++) expect(jsonTextOf(await tool.run(job({ call }), runOptions()))).toBe(`{"call":${call}}`);
      expect(own.cgroups.ownDirs.length).toBeGreaterThan(0);
      await tool.close();
      t.runner = undefined;
      expect(own.cgroups.ownDirs).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('does not use a prepared sandbox that died while waiting', async () => {
    const tool = t.start({ command: ['/bin/sh', '-c', 'exec cat', t.marker] });
    expect(jsonTextOf(await tool.run(job({ call: 1 }), runOptions()))).toBe('{"call":1}');
    const [shell] = await waitForPreparedSandbox();
    process.kill(shell ?? 0, 'SIGKILL');
    // The whole sandbox ends with its shell (the word of its exit may still be on its way from the spawner).
    expect(await waitForNoMarkedProcesses(t.marker)).toEqual([]);
    // The spawner sends a tool's exit before it answers a later request: once it reports no
    // live group, the host has heard that the prepared sandbox ended.
    await until(async () => (await services.spawner.memory())?.liveGroups === 0, 'the spawner to report the killed sandbox gone');
    expect(jsonTextOf(await tool.run(job({ call: 2 }), runOptions()))).toBe('{"call":2}');
  });

  it("builds a new sandbox when the call's timeout differs, with the CPU limit from that timeout", async () => {
    const script = 'cat > /dev/null; grep "Max cpu time" /proc/self/limits';
    const tool = t.start({ command: ['/bin/sh', '-c', script, t.marker], stdout: 'text' });
    const cpuLimit = async (timeoutMs: number): Promise<string> => {
      const outcome = await tool.run(job({}), runOptions({ timeoutMs }));
      if (!outcome.ok || outcome.output.type !== 'text') throw new Error(`expected text output: ${JSON.stringify(outcome)}`);
      return Buffer.from(outcome.output.bytes).toString('utf8').split(/\s+/).slice(3, 5).join(' ');
    };
    // CPU seconds: the timeout rounded up plus a 2 s margin; the hard limit one more.
    expect(await cpuLimit(5000)).toBe('7 8');
    expect(await cpuLimit(20_000)).toBe('22 23');
    expect(await cpuLimit(20_000)).toBe('22 23');
    // Only one sandbox waits at a time: the one for 5000 ms was stopped.
    expect(await waitForPreparedSandbox()).toHaveLength(1);
  });

  it('stops a prepared sandbox that waited longer than its idle time', async () => {
    const tool = t.start({ command: ['/bin/sh', '-c', 'exec cat', t.marker] }, { preparedIdleMs: 200 });
    expect(jsonTextOf(await tool.run(job({}), runOptions()))).toBe('{}');
    expect(await waitForNoMarkedProcesses(t.marker)).toEqual([]);
    // And the next call starts one afresh.
    expect(jsonTextOf(await tool.run(job({ again: true }), runOptions()))).toBe('{"again":true}');
  });

  it('keeps sandboxes prepared for a bounded number of tools, the least recently used giving up first', async () => {
    const runners: Runner[] = ['first', 'second', 'third', 'fourth'].map((name) =>
      createProcessRunner(processSpec(t.marker, { name, command: ['/bin/sh', '-c', 'exec cat', t.marker, name] }), { logger: createSilentLogger(), services, maxToolsPrepared: 3 }),
    );
    try {
      for (const tool of runners) expect(jsonTextOf(await tool.run(job({}), runOptions()))).toBe('{}');
      const preparedFor = async (): Promise<string[]> => {
        const shells = await pollUntil(() => {
          const found = findMarkedProcesses(t.marker).filter((candidate) => /^\S*(sh|dash) -c .*read -r start && exec "\$@"/.test(candidate.cmdline));
          return { done: found.length === 3, value: found };
        }, 10_000);
        return shells.map((shell) => shell.cmdline.split(' ').at(-1) ?? '').sort();
      };
      expect(await preparedFor()).toEqual(['fourth', 'second', 'third']);
      // Using the first tool again makes the second the least recently used.
      const [first] = runners;
      if (first === undefined) throw new Error('no runner');
      expect(jsonTextOf(await first.run(job({}), runOptions()))).toBe('{}');
      expect(await preparedFor()).toEqual(['first', 'fourth', 'third']);
    } finally {
      await Promise.all(runners.map((tool) => tool.close()));
    }
  });

  it('prepares none when asked for none (a host serving one call, `toolhost call`)', async () => {
    const tool = t.start({ command: ['/bin/sh', '-c', 'exec cat', t.marker] }, { preparedAhead: 0 });
    expect(jsonTextOf(await tool.run(job({ only: 1 }), runOptions()))).toBe('{"only":1}');
    expect(await waitForNoMarkedProcesses(t.marker)).toEqual([]);
    expect(jsonTextOf(await tool.run(job({ only: 2 }), runOptions()))).toBe('{"only":2}');
  });

  it('answers cancelled and leaves nothing when closed while a call waits for its sandbox', async () => {
    const tool = t.start({ command: ['/bin/sh', '-c', 'exec /bin/sleep 1000', t.marker] });
    const pending = tool.run(job({}), runOptions());
    await t.runner?.close();
    t.runner = undefined;
    const outcome = await pending;
    expect(outcome.ok).toBe(false);
    expect(await waitForNoMarkedProcesses(t.marker)).toEqual([]);
  });
});
