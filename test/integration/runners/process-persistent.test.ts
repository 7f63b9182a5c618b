// Persistent process pool (NDJSON) against hostile fixtures. Every process is
// tagged with the test's marker; after each test a /proc scan proves none remains.
import { describe, expect, it, vi } from 'vitest';
import type { Runner, RunSpec } from '../../../src/runner/types.js';
import type { ProgressEvent, RunOutcome } from '../../../src/runner/run-types.js';
import { findMarkedProcesses, pollUntil, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';
import { job, nodeFixture, runOptions, useRunnerTest } from '../../helpers/process-runner-test.js';
import { failureOf, jsonTextOf } from '../../helpers/run-outcomes.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import type { HostError } from '../../../src/errors.js';
import type { Manifest } from '../../../src/registry/manifest.js';
import { parseResult, type LocalOutput } from '../../../src/supervisor/result/parse.js';

const t = useRunnerTest();

/** The persistent fixture's spec: one long-lived process speaking NDJSON. */
function persistent(overrides: Partial<RunSpec> = {}): Partial<RunSpec> {
  return { command: nodeFixture('persistent.mjs', t.marker), persistent: true, poolSize: 1, ...overrides };
}

async function echo(pool: Runner, value: unknown): Promise<{ value: unknown; instance: string }> {
  return JSON.parse(jsonTextOf(await pool.run(job({ op: 'echo', value }), runOptions()))) as { value: unknown; instance: string };
}

async function waitForGrandchild(): Promise<ReturnType<typeof findMarkedProcesses>> {
  return pollUntil(() => {
    const found = findMarkedProcesses(t.marker).filter((candidate) => candidate.cmdline === '/bin/sleep 1003');
    return { done: found.length > 0, value: found };
  }, 10_000);
}

describe('process runner, persistent pool', () => {
  it('answers calls from a warm process that stays alive between them', async () => {
    const pool = t.start(persistent());
    const first = await echo(pool, { n: 1 });
    const second = await echo(pool, 'two');
    expect(first.value).toEqual({ n: 1 });
    expect(second.value).toBe('two');
    expect(second.instance).toBe(first.instance);
  });

  it('forwards progress envelopes to onProgress', async () => {
    const pool = t.start(persistent());
    const events: ProgressEvent[] = [];
    const outcome = await pool.run(job({ op: 'progress' }), runOptions({ onProgress: (event) => events.push(event) }));
    expect(JSON.parse(jsonTextOf(outcome))).toMatchObject({ done: true });
    expect(events).toEqual([
      { progress: 1, total: 2, message: 'half' },
      { progress: 2, total: 2 },
    ]);
  });

  it('turns an error envelope into tool_error and keeps the process', async () => {
    const pool = t.start(persistent());
    const before = await echo(pool, 0);
    expect(failureOf(await pool.run(job({ op: 'error' }), runOptions()))).toEqual({ code: 'tool_error', details: { message: 'bad input' } });
    expect((await echo(pool, 1)).instance).toBe(before.instance);
  });

  it('kills and replaces a process that prints a non-JSON line; the call fails invalid_output', async () => {
    const pool = t.start(persistent());
    const before = await echo(pool, 0);
    expect(failureOf(await pool.run(job({ op: 'garbage' }), runOptions()))).toEqual({ code: 'invalid_output', details: { reason: 'not_json' } });
    const after = await echo(pool, 1);
    expect(after.value).toBe(1);
    expect(after.instance).not.toBe(before.instance);
  });

  it('ignores a line with an unknown id', async () => {
    const pool = t.start(persistent());
    const before = await echo(pool, 0);
    const outcome = await pool.run(job({ op: 'unknown-id' }), runOptions());
    expect(JSON.parse(jsonTextOf(outcome))).toEqual({ instance: before.instance });
  });

  it('replaces a timed-out process and kills the grandchild it left in another session', async () => {
    const pool = t.start(persistent());
    const before = await echo(pool, 0);
    // The deadline must come after the test saw the grandchild: generous for a loaded machine.
    const pending = pool.run(job({ op: 'hang-with-grandchild' }), runOptions({ timeoutMs: 8000 }));
    const grandchild = await waitForGrandchild();
    expect(grandchild).toHaveLength(1);
    expect(failureOf(await pending)).toEqual({ code: 'timeout', details: { timeoutMs: 8000 } });
    expect(
      await pollUntil(() => {
        const left = findMarkedProcesses(t.marker).filter((candidate) => candidate.cmdline === '/bin/sleep 1003');
        return { done: left.length === 0, value: left };
      }, 15_000),
    ).toEqual([]);
    const after = await echo(pool, 1);
    expect(after.instance).not.toBe(before.instance);
  });

  it('cancels through the AbortSignal, kills the process and replaces it', async () => {
    const pool = t.start(persistent());
    const before = await echo(pool, 0);
    const controller = new AbortController();
    const pending = pool.run(job({ op: 'hang-with-grandchild' }), runOptions({ signal: controller.signal }));
    // Readiness: the call is in the process once its grandchild exists.
    expect(await waitForGrandchild()).toHaveLength(1);
    controller.abort();
    expect(failureOf(await pending)).toEqual({ code: 'cancelled', details: {} });
    expect((await echo(pool, 1)).instance).not.toBe(before.instance);
  });

  it('reports a process that dies during a call as tool_crashed, then starts a new one', async () => {
    const pool = t.start(persistent());
    const { code, details } = failureOf(await pool.run(job({ op: 'crash' }), runOptions()));
    expect(code).toBe('tool_crashed');
    expect(details['exitCode']).toBe(128 + 11);
    // It died before its first answer: no eager respawn (a tool that cannot start must not loop).
    expect(await waitForNoMarkedProcesses(t.marker)).toEqual([]);
    expect((await echo(pool, 'again')).value).toBe('again');
  });

  it('replaces at once a process that crashes after it has been answering', async () => {
    const pool = t.start(persistent());
    const before = await echo(pool, 0);
    expect(failureOf(await pool.run(job({ op: 'crash' }), runOptions())).code).toBe('tool_crashed');
    // The replacement starts without waiting for the next call.
    const replacement = await pollUntil(() => {
      const found = findMarkedProcesses(t.marker).filter((candidate) => candidate.cmdline.startsWith(process.execPath));
      return { done: found.length === 1, value: found };
    }, 10_000);
    expect(replacement).toHaveLength(1);
    expect((await echo(pool, 1)).instance).not.toBe(before.instance);
  });

  it('kills a process whose line grows past floodCapBytes: output_limit', async () => {
    const pool = t.start(persistent({ floodCapBytes: 64 * 1024 }));
    expect(failureOf(await pool.run(job({ op: 'long-line', bytes: 1024 * 1024 }), runOptions()))).toEqual({
      code: 'output_limit',
      details: { reason: 'flood_cap', limit: 64 * 1024 },
    });
    expect((await echo(pool, 2)).value).toBe(2);
  });

  it('hands duplicate-key and 100,000-deep results on as raw JSON text', async () => {
    const pool = t.start(persistent({ floodCapBytes: 1 << 20 }));
    expect(jsonTextOf(await pool.run(job({ op: 'raw-result', raw: '{"a":1,"a":2}' }), runOptions()))).toBe('{"a":1,"a":2}');
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(jsonTextOf(await pool.run(job({ op: 'raw-result', raw: deep }), runOptions()))).toBe(deep);
    expect((await echo(pool, 3)).value).toBe(3);
  });

  it("hands a result's value from the line's one parse, and the supervisor's checks still refuse what they refused", async () => {
    const pool = t.start(persistent({ floodCapBytes: 1 << 20 }));
    const manifest = { name: 'fixture_tool' } as unknown as Manifest;
    const jsonOutput = (outcome: RunOutcome): LocalOutput => {
      if (!outcome.ok || outcome.output.type !== 'json') throw new Error(`expected a JSON result, got ${JSON.stringify(outcome).slice(0, 300)}`);
      return outcome.output;
    };
    const refusalOf = (output: LocalOutput) => {
      try {
        parseResult(output, manifest);
      } catch (error) {
        return { code: (error as HostError).code, details: (error as HostError).details };
      }
      return undefined;
    };
    const good = jsonOutput(await pool.run(job({ op: 'echo', value: { a: [1, 'x'] } }), runOptions()));
    expect(good.type === 'json' && good.parsed).toMatchObject({ value: { a: [1, 'x'] } });
    expect(parseResult(good, manifest)).toMatchObject({ type: 'json', value: { value: { a: [1, 'x'] } } });
    const instance = (await echo(pool, 0)).instance;
    for (const raw of ['{"a":1,"a":2}', '['.repeat(300) + ']'.repeat(300), '['.repeat(100_000) + ']'.repeat(100_000)]) {
      const output = jsonOutput(await pool.run(job({ op: 'raw-result', raw }), runOptions()));
      // Same code and details as the text checked alone (what a one-shot tool's output gets).
      expect(refusalOf(output)).toEqual(refusalOf({ type: 'json', json: raw }));
      expect(refusalOf(output)?.code).toBe('invalid_output');
    }
    // A refused result is the call's failure, not the process's: it is still the same one.
    expect((await echo(pool, 3)).instance).toBe(instance);
  });

  it('queues calls when every process is busy and runs them on poolSize processes', async () => {
    const pool = t.start(persistent({ poolSize: 2 }));
    const answers = await Promise.all([0, 1, 2, 3, 4, 5].map((value) => echo(pool, value)));
    expect(answers.map((answer) => answer.value)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(answers.map((answer) => answer.instance)).size).toBeLessThanOrEqual(2);
    expect(findMarkedProcesses(t.marker).filter((found) => found.cmdline.startsWith(process.execPath)).length).toBe(2);
  });

  it('writes the next queued request in the same turn as the answer that frees the process', async () => {
    // A spy on the real spawner: each tool's stdin records the lines the pool writes to it.
    const written: string[] = [];
    const spawn = t.services.spawner.spawn.bind(t.services.spawner);
    const spy = vi.spyOn(t.services.spawner, 'spawn').mockImplementation(async (request) => {
      const started = await spawn(request);
      if (started.ok) {
        const { stdin } = started.process;
        const write = stdin.write.bind(stdin) as (chunk: unknown) => boolean;
        stdin.write = ((chunk: unknown) => {
          written.push(String(chunk));
          return write(chunk);
        }) as typeof stdin.write;
      }
      return started;
    });
    try {
      const pool = t.start(persistent({ poolSize: 1 }));
      await echo(pool, 0);
      const first = job({ op: 'echo', value: 1 });
      const second = job({ op: 'echo', value: 2 });
      // Read in the microtasks of the turn that delivered the first answer: a pump
      // deferred to a later turn (setImmediate, a timer) would not have written yet.
      const secondWrittenWithFirstAnswer = pool.run(first, runOptions()).then(() => written.some((line) => line.includes(second.callId)));
      const secondOutcome = pool.run(second, runOptions());
      expect(await secondWrittenWithFirstAnswer).toBe(true);
      expect(JSON.parse(jsonTextOf(await secondOutcome))).toMatchObject({ value: 2 });
    } finally {
      spy.mockRestore();
    }
  });

  it('times out a call still waiting in the queue without touching the busy process', async () => {
    const pool = t.start(persistent({ poolSize: 1 }));
    const busy = pool.run(job({ op: 'hang' }), runOptions({ timeoutMs: 3000 }));
    expect(failureOf(await pool.run(job({ op: 'echo', value: 1 }), runOptions({ timeoutMs: 100 })))).toEqual({
      code: 'timeout',
      details: { timeoutMs: 100 },
    });
    expect(failureOf(await busy).code).toBe('timeout');
    expect((await echo(pool, 4)).value).toBe(4);
  });

  it('close() kills every process and fails later calls as cancelled', async () => {
    const pool = t.start(persistent({ poolSize: 2 }));
    await echo(pool, 0);
    const pending = pool.run(job({ op: 'hang' }), runOptions());
    await pool.close();
    expect(failureOf(await pending).code).toBe('cancelled');
    expect(findMarkedProcesses(t.marker)).toEqual([]);
    expect(failureOf(await pool.run(job({ op: 'echo', value: 1 }), runOptions())).code).toBe('cancelled');
  });

  it('unsolicited output of persistent processes: a 4 MB flood between calls is cut off, logged at a bounded rate, and the process replaced', async () => {
    const log = recordingLogger();
    const pool = t.start(persistent(), { logger: log.logger });
    const first = JSON.parse(jsonTextOf(await pool.run(job({ op: 'flood-after', bytes: 4 << 20 }), runOptions()))) as { instance: string };
    // Retired for its flood while idle: no call is needed to notice, and the next call goes to its replacement.
    const replacing = (): boolean => log.lines().some((line) => line['msg'] === 'persistent process wrote too much between calls; replacing it');
    expect(await pollUntil(() => ({ done: replacing(), value: replacing() }), 10_000)).toBe(true);
    const next = await echo(pool, 'after the flood');
    expect(next.value).toBe('after the flood');
    expect(next.instance).not.toBe(first.instance);
    const ignored = log.lines().filter((line) => line['msg'] === 'persistent process answered an unknown id; ignored');
    expect(ignored.length).toBeLessThanOrEqual(5);
    expect(log.lines().filter((line) => line['msg'] === 'persistent process wrote too much between calls; replacing it')).toHaveLength(1);
    expect(log.bytes()).toBeLessThan(16 * 1024);
  });

  it('a little output between calls is ignored and the process stays', async () => {
    const log = recordingLogger();
    const pool = t.start(persistent(), { logger: log.logger });
    const first = JSON.parse(jsonTextOf(await pool.run(job({ op: 'chatter-after', lines: 20 }), runOptions()))) as { instance: string };
    expect((await echo(pool, 1)).instance).toBe(first.instance);
    expect((await echo(pool, 2)).instance).toBe(first.instance);
    const ignored = log.lines().filter((line) => line['msg'] === 'persistent process answered an unknown id; ignored');
    expect(ignored.length).toBeGreaterThan(0);
    expect(ignored.length).toBeLessThanOrEqual(5);
  });
});
