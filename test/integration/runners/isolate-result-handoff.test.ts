// isolate runner against tools that try to run their own code where a call's
// result leaves the isolate: isolated-vm copies a result, and looks up its
// promise's `then`, after the step's timeout. Without the locked promise
// built-ins and the plain envelope, each of these held the isolate process's
// thread until the call's deadline ended the process (timeout).
import { describe, expect, it } from 'vitest';
import type { Runner } from '../../../src/runner/types.js';
import { recordingOptions, useFixtureRunners } from '../../helpers/fixture-runners.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { useProcessServices } from '../../helpers/process-services.js';

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
    expect(failureOf(outcome).code).toBe('tool_error');
    await expectRecovers(runner, 2);
  });

  it('locks only what isolated-vm reads on a promise: then, constructor and the species', async () => {
    const runner = isolateRunner('forge-envelope.mjs');
    expect(jsonOf(await runner.run({ callId: 'locks', args: { mode: 'report_locks' } }, recordingOptions(3000)))).toEqual({
      then: 'TypeError',
      constructor: 'TypeError',
      species: 'TypeError',
      withResolvers: 'replaced',
      finally: 'replaced',
    });
  });
});
