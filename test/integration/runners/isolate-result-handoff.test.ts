// isolate runner against tools that try to run their own code where a call's
// result leaves the isolate. isolated-vm copies a result after the step's
// timeout: before the envelope was made plain (primitives only, no prototype),
// the first two held the isolate process's main thread, and every call of the
// tool, until the call's deadline ended the process. The third spins where
// isolated-vm hands a still-waiting run out (its then reads the species): that
// is within the step, cut like any other code of the tool's.
import { describe, expect, it } from 'vitest';
import type { Runner } from '../../../src/runner/types.js';
import { recordingOptions, useFixtureRunners } from '../../helpers/fixture-runners.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { useProcessServices } from '../../helpers/process-services.js';
import { until } from '../../helpers/wait.js';

useProcessServices();
const isolateRunner = useFixtureRunners('isolate');

async function expectRecovers(runner: Runner, value: number): Promise<void> {
  expect(jsonOf(await runner.run({ callId: 'after', args: { mode: 'echo', value } }, recordingOptions()))).toEqual({ echo: value });
}

describe('isolate runner: code that would run where the result leaves the isolate', () => {
  it('answers a tool that gives the envelope a then (on Object.prototype) with its own result, and the next call works', async () => {
    const runner = isolateRunner('forge-envelope.mjs');
    expect(jsonOf(await runner.run({ callId: 'then', args: { mode: 'then_on_envelope' } }, recordingOptions(3000)))).toEqual({ fine: true });
    await expectRecovers(runner, 1);
  });

  it('fails a tool that swaps what awaits hand back (Promise.prototype.then) as tool_error, and the next call works', async () => {
    const runner = isolateRunner('forge-envelope.mjs');
    const outcome = await runner.run({ callId: 'swap', args: { mode: 'swap_promise_then' } }, recordingOptions(3000));
    expect(failureOf(outcome)).toEqual({ code: 'tool_error', details: {} });
    await expectRecovers(runner, 2);
  });

  it('holds no other call when a species getter of the tool’s spins as the still-waiting run is handed out', async () => {
    const runner = isolateRunner('forge-envelope.mjs');
    const hostileOptions = recordingOptions(3000);
    const ended: string[] = [];
    const hostile = runner.run({ callId: 'spin', args: { mode: 'species_spins_while_waiting' } }, hostileOptions).then((outcome) => {
      ended.push('hostile');
      return outcome;
    });
    await until(() => hostileOptions.progress.length > 0);
    const bystander = await runner.run({ callId: 'bystander', args: { mode: 'echo', value: 3 } }, recordingOptions(30_000));
    ended.push('bystander');
    expect(jsonOf(bystander)).toEqual({ echo: 3 });
    expect(failureOf(await hostile)).toEqual({ code: 'timeout', details: { timeoutMs: 3000 } });
    expect(ended).toEqual(['bystander', 'hostile']);
    await expectRecovers(runner, 4);
  });
});
