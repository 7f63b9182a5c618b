// The lanes of a worker pool (src/runner/worker/call-dispatch.ts, worker-lane.ts):
// the calls of a thread ride one long Piscina task and its port, not a task each;
// a second lane opens beside a busy one, and lets its thread go once idle; an
// answer the thread posted before it died still counts. Real Piscina threads
// running sandbox/worker/worker-entry.mjs with the switch fixture tool.
import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Piscina } from 'piscina';
import { createSilentLogger } from '../../../src/log.js';
import type { RunOutcome } from '../../../src/runner/run-types.js';
import { CallDispatch } from '../../../src/runner/worker/call-dispatch.js';
import { CallGates } from '../../../src/runner/worker/call-gates.js';
import { WorkerCall } from '../../../src/runner/worker/worker-call.js';
import { createWorkerPool } from '../../../src/runner/worker/worker-pool.js';
import { classifyWorkerError, WORKER_CALLS_PER_THREAD } from '../../../src/runner/worker/worker-runner.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { runOptions } from '../../helpers/run-options.js';
import { until } from '../../helpers/wait.js';
import { makeSpec } from '../../helpers/fixture-runners.js';

interface Lanes {
  readonly pool: Piscina;
  /** Runs one call through the dispatch, as the runner does; `abort` cancels it. */
  run(args: Record<string, unknown>, abort?: AbortController): Promise<RunOutcome>;
}

const pools: Piscina[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.destroy()));
});

function lanes(poolSize: number, idleMs = 60_000): Lanes {
  const spec = makeSpec('worker', 'switch.mjs', { poolSize });
  const gates = new CallGates(poolSize * WORKER_CALLS_PER_THREAD);
  const pool = createWorkerPool(spec, { gates, eventChannel: `lanes-test-${randomUUID()}` });
  pools.push(pool);
  const dispatch = new CallDispatch(pool, gates, {
    maxThreads: poolSize,
    perThread: WORKER_CALLS_PER_THREAD,
    maxQueue: 64,
    idleMs,
    isClosed: () => false,
    classify: (error) => classifyWorkerError(error, { memoryMb: spec.memoryMb, closed: false }),
    postAbort: () => undefined,
  });
  const rules = { logger: createSilentLogger(), floodCapBytes: spec.floodCapBytes, onSettled: () => undefined };
  let id = 0;
  return {
    pool,
    run: (args, abort = new AbortController()) =>
      new Promise<RunOutcome>((resolve) => {
        const call = new WorkerCall({ callId: `lane-${++id}`, args }, runOptions({ signal: abort.signal }), rules, performance.now(), resolve);
        dispatch.submit(call);
        if (!call.done) call.stopsWith((stopped) => dispatch.stop(stopped));
      }),
  };
}

const threadOf = (outcome: RunOutcome): number => (jsonOf(outcome) as { threadId: number }).threadId;

describe('worker lanes', () => {
  it('runs many calls of one thread through one Piscina task, not one task per call', async () => {
    const { pool, run } = lanes(1);
    let next = 0;
    const threads = new Set<number>();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < 40) threads.add(threadOf(await run({ mode: 'thread' })));
      }),
    );
    expect(threads.size).toBe(1);
    expect(pool.threads.length).toBe(1);
    // The lane's task is still open: no call was a Piscina task of its own.
    expect(pool.completed).toBe(0);
  });

  it('opens a second lane beside a busy one, and lets its thread go once it is idle', async () => {
    const { pool, run } = lanes(2, 100);
    const held = new AbortController();
    const never = run({ mode: 'never' }, held);
    // Handed to the busy first lane (it holds several calls); the pool opens a second one beside it.
    const behind = run({ mode: 'thread' });
    const beside = threadOf(await run({ mode: 'thread' }));
    expect(pool.threads.map((thread) => thread.threadId)).toContain(beside);
    // Idle for 100 ms, the second lane ends its task; the first, still busy, keeps its own.
    await until(() => pool.completed === 1, 'the idle lane to end its task');
    held.abort();
    expect(failureOf(await never)).toEqual({ code: 'cancelled', details: {} });
    // The call that waited behind the cancelled one never began there: it runs on another thread.
    expect(threadOf(await behind)).toEqual(expect.any(Number));
  });

  it('keeps the answer a thread posted just before it died, and runs what it never began elsewhere', async () => {
    const { run } = lanes(1);
    const [answered, crashed, after] = [run({ mode: 'thread' }), run({ mode: 'exit', code: 4 }), run({ mode: 'thread' })];
    const first = threadOf(await answered);
    expect(failureOf(await crashed)).toEqual({ code: 'tool_crashed', details: { exitCode: 4 } });
    expect(threadOf(await after)).not.toBe(first);
  });

  it('hands a call its threads never began from one dead thread to the next until one runs it', async () => {
    const { pool, run } = lanes(1);
    // All four go to the one thread at once; each exit ends the thread before the call behind it begins.
    const exits = [5, 6, 7].map((code) => run({ mode: 'exit', code }));
    const behind = run({ mode: 'thread' });
    expect((await Promise.all(exits)).map((outcome) => failureOf(outcome).details)).toEqual([{ exitCode: 5 }, { exitCode: 6 }, { exitCode: 7 }]);
    expect(pool.threads.map((thread) => thread.threadId)).toContain(threadOf(await behind));
  });
});
