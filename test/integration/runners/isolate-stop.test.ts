// An isolate process whose main thread is held (SPEC 3, 3.1), as a loaded machine holds it;
// here with SIGSTOP. A tool's step that cannot be cut at once (an uninterruptible builtin such
// as new Array(3e7).fill(1.5), about 1.7 s of CPU) still ends with the tool's own outcome when
// the process gets the CPU back, whatever the wall time. A process that cannot say that a
// stopped call's isolate is gone is killed at the stop's grace with every call in it, and a
// call that comes meanwhile waits for the stop to be over, its deadline held, and never
// shares that process's end.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { recordingOptions, useFixtureRunners } from '../../helpers/fixture-runners.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { findMarkedProcesses } from '../../helpers/proc-scan.js';
import { until } from '../../helpers/wait.js';

const isolateRunner = useFixtureRunners('isolate');

/** The isolate process of the runner's tool `name` (its node process, not bubblewrap's above it). */
function isolateProcessPids(name: string): number[] {
  return findMarkedProcesses(`TOOLHOST_ISOLATE_TOOL=${name}`)
    .filter((found) => found.cmdline.startsWith(`${process.execPath} `) && found.cmdline.includes('isolate-process.mjs'))
    .map((found) => found.pid);
}

/** Sends `signal` to each of `pids` that is still there. */
function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already.
    }
  }
}

/** A runner of switch.mjs under a name of its own, after one call: its one isolate process is running. */
async function warmRunner() {
  const name = `held_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const runner = isolateRunner('switch.mjs', { name });
  expect(jsonOf(await runner.run({ callId: 'warm', args: { mode: 'echo', value: 'warm' } }, recordingOptions()))).toEqual({ echo: 'warm' });
  const pids = isolateProcessPids(name);
  expect(pids).toHaveLength(1);
  return { runner, pids };
}

describe('isolate runner: a held isolate process', () => {
  it("ends a step that cannot be cut at once with the tool's own outcome, however long the process was held", async () => {
    const { runner, pids } = await warmRunner();
    const filling = runner.run({ callId: 'fill', args: { mode: 'array_fill' } }, recordingOptions(30_000));
    // Held past the 5 s isolated-vm gives a step to take its cut, while the fill runs.
    await new Promise((resolve) => setTimeout(resolve, 300));
    signalAll(pids, 'SIGSTOP');
    try {
      await new Promise((resolve) => setTimeout(resolve, 6000));
    } finally {
      signalAll(pids, 'SIGCONT');
    }
    expect(failureOf(await filling)).toEqual({ code: 'memory_limit', details: { memoryMb: 32 } });
    expect(jsonOf(await runner.run({ callId: 'after', args: { mode: 'echo', value: 'after' } }, recordingOptions()))).toEqual({ echo: 'after' });
  });

  it('runs a call that comes meanwhile in the next process, not in the one about to be killed', async () => {
    const { runner, pids } = await warmRunner();
    const options = recordingOptions(3000);
    const stopped = runner.run({ callId: 'stopped', args: { mode: 'progress_then_never' } }, options);
    await until(() => options.progress.length > 0);
    signalAll(pids, 'SIGSTOP');
    try {
      expect(failureOf(await stopped)).toEqual({ code: 'timeout', details: { timeoutMs: 3000 } });
      expect(jsonOf(await runner.run({ callId: 'next', args: { mode: 'echo', value: 'next' } }, recordingOptions()))).toEqual({ echo: 'next' });
    } finally {
      signalAll(pids, 'SIGCONT');
    }
  });
});
