// The isolate process as the runner uses it: fail closed without a usable
// bubblewrap, a bounded number of live processes per host (the least recently
// used gives way), a process that dies between calls replaced ahead of the next.
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { createIsolateRunner } from '../../../src/runner/isolate/isolate-runner.js';
import { ISOLATE_TOOL_ENV } from '../../../src/runner/isolate/isolate-sandbox.js';
import { findMarkedProcesses, pollUntil } from '../../helpers/proc-scan.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { FIXTURES_DIR } from '../../helpers/sandbox-run.js';
import { makeSpec, recordingOptions, useRunnerCleanup } from '../../helpers/fixture-runners.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();
/** A host that keeps one isolate process alive at a time. */
const oneProcessServices = useProcessServices({ maxIsolateProcesses: 1 });

const logger = createSilentLogger();
const track = useRunnerCleanup();

/** A unique tool name: its isolate process is found in /proc by it. */
function uniqueName(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
}

function isolateProcessPids(tool: string): number[] {
  return findMarkedProcesses(`${ISOLATE_TOOL_ENV}=${tool}`)
    .filter((found) => found.cmdline.startsWith(`${process.execPath} `) && found.cmdline.includes('isolate-process.mjs'))
    .map((found) => found.pid);
}

describe('isolate processes', () => {
  it.each([
    ['missing', '/nonexistent/toolhost-test/bwrap', 'apt-get install bubblewrap'],
    ['unable to create namespaces', join(FIXTURES_DIR, 'bwrap-denied.sh'), 'Creating new namespace failed'],
  ])('fail closed with sandbox_unavailable when bubblewrap is %s', async (_name, bwrapPath, why) => {
    const runner = track(createIsolateRunner(makeSpec('isolate', 'echo.mjs'), { logger, services, bwrapPath }));
    const outcome = await runner.run({ callId: 'closed', args: {} }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'sandbox_unavailable', details: { reason: expect.stringContaining(why) } });
  });

  it('keeps at most maxAlive processes per host: the least recently used idle one gives way, and comes back on its next call', async () => {
    const registry = oneProcessServices.isolateProcesses;
    const first = uniqueName('lru_a');
    const second = uniqueName('lru_b');
    const a = track(createIsolateRunner(makeSpec('isolate', 'echo.mjs', { name: first }), { logger, services: oneProcessServices }));
    expect(jsonOf(await a.run({ callId: 'a1', args: { n: 1 } }, recordingOptions(20_000)))).toEqual({ echo: { n: 1 }, callId: 'a1' });
    expect(isolateProcessPids(first)).toHaveLength(1);
    const b = track(createIsolateRunner(makeSpec('isolate', 'echo.mjs', { name: second }), { logger, services: oneProcessServices }));
    expect(jsonOf(await b.run({ callId: 'b1', args: { n: 2 } }, recordingOptions(20_000)))).toEqual({ echo: { n: 2 }, callId: 'b1' });
    expect(await pollUntil(() => ({ done: isolateProcessPids(first).length === 0, value: isolateProcessPids(first) }), 10_000)).toEqual([]);
    expect(registry.aliveCount).toBe(1);
    expect(jsonOf(await a.run({ callId: 'a2', args: { n: 3 } }, recordingOptions(20_000)))).toEqual({ echo: { n: 3 }, callId: 'a2' });
    expect(await pollUntil(() => ({ done: isolateProcessPids(second).length === 0, value: isolateProcessPids(second) }), 10_000)).toEqual([]);
  });

  it('replaces a process that died between calls before the next call, and leaves nothing behind on close', async () => {
    const name = uniqueName('restart');
    const runner = createIsolateRunner(makeSpec('isolate', 'echo.mjs', { name }), { logger, services });
    expect(jsonOf(await runner.run({ callId: 'r1', args: {} }, recordingOptions(20_000)))).toEqual({ echo: {}, callId: 'r1' });
    const [pid] = isolateProcessPids(name);
    process.kill(pid ?? 0, 'SIGKILL');
    const replaced = await pollUntil(() => {
      const pids = isolateProcessPids(name);
      return { done: pids.length === 1 && pids[0] !== pid, value: pids };
    }, 20_000);
    expect(replaced).toHaveLength(1);
    expect(replaced).not.toContain(pid);
    expect(jsonOf(await runner.run({ callId: 'r2', args: {} }, recordingOptions(20_000)))).toEqual({ echo: {}, callId: 'r2' });
    await runner.close();
    expect(await pollUntil(() => ({ done: isolateProcessPids(name).length === 0, value: isolateProcessPids(name) }), 10_000)).toEqual([]);
  });
});
