// An isolate process that cannot stop a call (SPEC 3, 3.1): a process whose main thread is
// held cannot say that a stopped call's isolate is gone, and is killed at the stop's grace
// with every call in it. isolated-vm holds that thread for good when a tool's step cannot be
// cut within 5 s of its timeout (an uninterruptible builtin such as new Array(3e7).fill(1.5)
// on a loaded machine); here the process is held with SIGSTOP. A call that comes meanwhile
// waits for the stop to be over, its deadline held, and never shares that process's end.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { recordingOptions, useFixtureRunners } from '../../helpers/fixture-runners.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { findMarkedProcesses } from '../../helpers/proc-scan.js';
import { until } from '../../helpers/wait.js';

const isolateRunner = useFixtureRunners('isolate');

describe('isolate runner: a process that cannot stop a call', () => {
  it('runs a call that comes meanwhile in the next process, not in the one about to be killed', async () => {
    const name = `held_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const runner = isolateRunner('switch.mjs', { name });
    expect(jsonOf(await runner.run({ callId: 'warm', args: { mode: 'echo', value: 'warm' } }, recordingOptions()))).toEqual({ echo: 'warm' });
    const pids = findMarkedProcesses(`TOOLHOST_ISOLATE_TOOL=${name}`)
      .filter((found) => found.cmdline.startsWith(`${process.execPath} `) && found.cmdline.includes('isolate-process.mjs'))
      .map((found) => found.pid);
    expect(pids).toHaveLength(1);
    const options = recordingOptions(3000);
    const stopped = runner.run({ callId: 'stopped', args: { mode: 'progress_then_never' } }, options);
    await until(() => options.progress.length > 0);
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    try {
      expect(failureOf(await stopped)).toEqual({ code: 'timeout', details: { timeoutMs: 3000 } });
      expect(jsonOf(await runner.run({ callId: 'next', args: { mode: 'echo', value: 'next' } }, recordingOptions()))).toEqual({ echo: 'next' });
    } finally {
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Killed already, as it should be.
        }
      }
    }
  });
});
