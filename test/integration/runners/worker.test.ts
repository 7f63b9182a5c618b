// worker runner: normal calls, ctx, and hostile tools (busy loop, exit, heap
// growth). Every hostile case asserts the code and that the next call works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Runner } from '../../../src/runner/types.js';
import { WORKER_CALLS_PER_THREAD, WORKER_MAX_QUEUE } from '../../../src/runner/worker/worker-runner.js';
import { recordingOptions, root, useFixtureRunners } from '../../helpers/fixture-runners.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { until } from '../../helpers/wait.js';

const workerRunner = useFixtureRunners('worker', { memoryMb: 64 });

async function expectRecovers(runner: Runner, value: number): Promise<void> {
  const outcome = await runner.run({ callId: 'after', args: { mode: 'echo', value } }, recordingOptions());
  expect(jsonOf(outcome)).toEqual({ echo: value, callId: 'after', hasSignal: true });
}

describe('worker runner: normal calls', () => {
  it('runs the tool with its arguments, the call id and ctx.signal', async () => {
    const runner = workerRunner('switch.mjs');
    expect(runner.mode).toBe('worker');
    await expectRecovers(runner, 1);
  });

  it('gives the worker only the environment names in the spec', async () => {
    const runner = workerRunner('switch.mjs', { env: { TOOLHOST_TEST_LANG: 'C' } });
    const outcome = await runner.run({ callId: 'env', args: { mode: 'env' } }, recordingOptions());
    expect(jsonOf(outcome)).toEqual({ keys: ['TOOLHOST_TEST_LANG'] });
  });

  it('forwards progress and log events before the answer', async () => {
    const runner = workerRunner('switch.mjs');
    const options = recordingOptions();
    const outcome = await runner.run({ callId: 'ev', args: { mode: 'events' } }, options);
    expect(jsonOf(outcome)).toEqual({ done: true });
    expect(options.progress).toEqual([
      { progress: 1, total: 3, message: 'one' },
      { progress: 3, total: 3 },
    ]);
    expect(options.logs).toEqual([{ level: 'info', message: 'hello' }]);
  });

  it('answers only after every event the worker posted for the call (its answer counts them)', async () => {
    const runner = workerRunner('switch.mjs');
    for (let round = 0; round < 5; round++) {
      const options = recordingOptions();
      const outcome = await runner.run({ callId: `burst-${round}`, args: { mode: 'event_burst', count: 300 } }, options);
      expect(jsonOf(outcome)).toEqual({ done: true });
      expect(options.progress.map((event) => event.progress)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    }
  });

  it('turns a thrown error into tool_error with its code', async () => {
    const runner = workerRunner('switch.mjs');
    const outcome = await runner.run({ callId: 't', args: { mode: 'throw', message: 'nope' } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'tool_error', details: { errorCode: 'broken' } });
    if (!outcome.ok) expect(outcome.message).toBe('nope');
  });

  it.each([
    ['bigint', { reason: 'bigint', path: '/n' }],
    ['cycle', { reason: 'not_serializable' }],
    ['undefined', { reason: 'undefined', path: '/' }],
    ['undefined_in_array', { reason: 'undefined', path: '/list/1' }],
  ])('refuses a %s result with invalid_output naming where', async (mode, details) => {
    const runner = workerRunner('switch.mjs');
    const outcome = await runner.run({ callId: mode, args: { mode } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'invalid_output', details });
    await expectRecovers(runner, 2);
  });

  it('leaves out an object property that is undefined, as JSON.stringify does', async () => {
    const runner = workerRunner('switch.mjs');
    const outcome = await runner.run({ callId: 'u', args: { mode: 'undefined_property' } }, recordingOptions());
    expect(jsonOf(outcome)).toEqual({ kept: 1, nested: { kept: [2] } });
  });

  it('refuses a result larger than floodCapBytes with output_limit', async () => {
    const runner = workerRunner('switch.mjs', { floodCapBytes: 10 });
    const outcome = await runner.run({ callId: 'o', args: { mode: 'echo', value: 123456789012 } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'output_limit', details: { reason: 'flood_cap', limit: 10 } });
  });

  it('counts the result in UTF-8 bytes, not characters, against floodCapBytes', async () => {
    const runner = workerRunner('switch.mjs', { floodCapBytes: 100 });
    // 30 euro signs: 30 UTF-16 units but 90 UTF-8 bytes, so the JSON is under 100 characters and over 100 bytes.
    const outcome = await runner.run({ callId: 'u', args: { mode: 'echo', value: '€'.repeat(30) } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'output_limit', details: { reason: 'flood_cap', limit: 100 } });
    const fits = await runner.run({ callId: 'v', args: { mode: 'echo', value: '€'.repeat(10) } }, recordingOptions());
    expect(jsonOf(fits)).toEqual({ echo: '€'.repeat(10), callId: 'v', hasSignal: true });
  });
});

describe('worker runner: hostile tools', () => {
  it('stops a busy loop with timeout, replaces the thread, and the next call works', async () => {
    const runner = workerRunner('switch.mjs');
    const before = jsonOf(await runner.run({ callId: 'th', args: { mode: 'thread' } }, recordingOptions())) as { threadId: number };
    const outcome = await runner.run({ callId: 'loop', args: { mode: 'busy_loop' } }, recordingOptions(300));
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 300 } });
    const after = jsonOf(await runner.run({ callId: 'th2', args: { mode: 'thread' } }, recordingOptions())) as { threadId: number };
    expect(after.threadId).not.toBe(before.threadId);
    await expectRecovers(runner, 3);
  });

  it('cancels a never-settling call when the signal aborts, and the next call works', async () => {
    const runner = workerRunner('switch.mjs');
    const options = recordingOptions(30_000);
    const pending = runner.run({ callId: 'c', args: { mode: 'never' } }, options);
    await until(() => options.progress.length > 0);
    options.controller.abort();
    expect(failureOf(await pending)).toEqual({ code: 'cancelled', details: {} });
    await expectRecovers(runner, 4);
  });

  it('stops a call still waiting for the busy thread (timeout, cancel) without ending the call running on it', async () => {
    const runner = workerRunner('switch.mjs');
    const running = recordingOptions(30_000);
    const first = runner.run({ callId: 'running', args: { mode: 'never' } }, running);
    await until(() => running.progress.length > 0);
    // Both wait in Piscina's queue behind `first` (one thread): each is taken off the queue by its own stop.
    const timedOut = runner.run({ callId: 'queued-timeout', args: { mode: 'echo', value: 1 } }, recordingOptions(200));
    const cancelling = recordingOptions(30_000);
    const cancelled = runner.run({ callId: 'queued-cancel', args: { mode: 'echo', value: 2 } }, cancelling);
    expect(failureOf(await timedOut)).toEqual({ code: 'timeout', details: { timeoutMs: 200 } });
    cancelling.controller.abort();
    expect(failureOf(await cancelled)).toEqual({ code: 'cancelled', details: {} });
    // Had a queued call's stop ended the thread, `first` would have settled as tool_crashed by now.
    running.controller.abort();
    expect(failureOf(await first)).toEqual({ code: 'cancelled', details: {} });
    await expectRecovers(runner, 6);
  });

  it('runs the calls a thread held but never began on the next thread when it is ended for another call', async () => {
    const runner = workerRunner('switch.mjs');
    const ended = jsonOf(await runner.run({ callId: 'held-th', args: { mode: 'thread' } }, recordingOptions())) as { threadId: number };
    const running = recordingOptions(30_000);
    const first = runner.run({ callId: 'held-by', args: { mode: 'never' } }, running);
    await until(() => running.progress.length > 0);
    // Handed to the same busy thread (it holds several calls, runs one at a time): none has begun.
    const behind = [1, 2, 3].map((value) => runner.run({ callId: `behind-${value}`, args: { mode: 'thread' } }, recordingOptions()));
    running.controller.abort();
    expect(failureOf(await first)).toEqual({ code: 'cancelled', details: {} });
    const threads = (await Promise.all(behind)).map((outcome) => (jsonOf(outcome) as { threadId: number }).threadId);
    // All three ran, once each, on the thread that replaced the ended one.
    expect(new Set(threads).size).toBe(1);
    expect(threads[0]).not.toBe(ended.threadId);
    await expectRecovers(runner, 8);
  });

  it('runs the calls behind a call that ends its thread (process.exit) on the next thread', async () => {
    const runner = workerRunner('switch.mjs');
    const crash = runner.run({ callId: 'crash', args: { mode: 'exit', code: 3 } }, recordingOptions());
    const behind = [1, 2, 3].map((value) => runner.run({ callId: `after-crash-${value}`, args: { mode: 'echo', value } }, recordingOptions()));
    expect(failureOf(await crash)).toEqual({ code: 'tool_crashed', details: { exitCode: 3 } });
    const echoes = (await Promise.all(behind)).map((outcome) => (jsonOf(outcome) as { echo: number }).echo);
    expect(echoes).toEqual([1, 2, 3]);
  });

  it('refuses a call with queue_full once the line behind a busy thread is full, and runs every accepted one', async () => {
    const runner = workerRunner('switch.mjs');
    const running = recordingOptions(30_000);
    const first = runner.run({ callId: 'blocker', args: { mode: 'never' } }, running);
    await until(() => running.progress.length > 0);
    // The busy thread holds WORKER_CALLS_PER_THREAD calls (the blocker and the next ones), WORKER_MAX_QUEUE more wait.
    const accepted = Array.from({ length: WORKER_CALLS_PER_THREAD - 1 + WORKER_MAX_QUEUE }, (_, i) =>
      runner.run({ callId: `line-${i}`, args: { mode: 'echo', value: i } }, recordingOptions()),
    );
    const refused = await runner.run({ callId: 'one-too-many', args: { mode: 'echo', value: -1 } }, recordingOptions());
    expect(failureOf(refused)).toEqual({ code: 'internal', details: { reason: 'queue_full', maxQueue: WORKER_MAX_QUEUE } });
    running.controller.abort();
    expect(failureOf(await first)).toEqual({ code: 'cancelled', details: {} });
    const echoes = (await Promise.all(accepted)).map((outcome) => (jsonOf(outcome) as { echo: number }).echo);
    expect(echoes).toEqual(Array.from({ length: accepted.length }, (_, i) => i));
  });

  it('reports process.exit(1) as tool_crashed, and the pool recovers', async () => {
    const runner = workerRunner('switch.mjs');
    const outcome = await runner.run({ callId: 'exit', args: { mode: 'exit', code: 1 } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'tool_crashed', details: { exitCode: 1 } });
    await expectRecovers(runner, 5);
  });

  it('reports an uncaught exception from a timer as tool_crashed, and the pool recovers', async () => {
    const runner = workerRunner('switch.mjs');
    const outcome = await runner.run({ callId: 'timer', args: { mode: 'uncaught_timer' } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'tool_crashed', details: { reason: 'worker_error' } });
    await expectRecovers(runner, 6);
  });

  it('stops heap growth with memory_limit, and the next call works', async () => {
    const runner = workerRunner('switch.mjs', { memoryMb: 32 });
    const outcome = await runner.run({ callId: 'heap', args: { mode: 'heap_growth' } }, recordingOptions(30_000));
    expect(failureOf(outcome)).toEqual({ code: 'memory_limit', details: { memoryMb: 32 } });
    await expectRecovers(runner, 7);
  });
});

describe('worker runner: shutdown', () => {
  it('answers a call in flight with cancelled when the runner closes, and refuses new calls', async () => {
    const runner = workerRunner('switch.mjs');
    const options = recordingOptions(30_000);
    const pending = runner.run({ callId: 'inflight', args: { mode: 'never' } }, options);
    await until(() => options.progress.length > 0);
    await runner.close();
    expect(failureOf(await pending)).toEqual({ code: 'cancelled', details: { reason: 'runner_closed' } });
    const after = await runner.run({ callId: 'late', args: { mode: 'echo', value: 1 } }, recordingOptions());
    expect(failureOf(after)).toEqual({ code: 'cancelled', details: { reason: 'runner_closed' } });
  });
});

describe('worker runner: ctx.fs and ctx.fetch', () => {
  let workspace: TempDir;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    workspace = makeTempDir('toolhost-worker-ws-');
    await writeFile(path.join(workspace.path, 'hello.txt'), 'hello worker');
    server = createServer((request, response) => {
      response.writeHead(request.url === '/hello' ? 200 : 404);
      response.end(request.url === '/hello' ? 'hi' : '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    workspace.remove();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads inside the root and refuses ../ with policy_denied reported to onDenied', async () => {
    const runner = workerRunner('switch.mjs', { roots: [root(workspace.path, 'read')] });
    const read = await runner.run({ callId: 'r', args: { mode: 'fs', op: 'readText', path: 'hello.txt' } }, recordingOptions());
    expect(jsonOf(read)).toEqual({ value: 'hello worker' });
    const options = recordingOptions();
    const denied = await runner.run({ callId: 'd', args: { mode: 'fs', op: 'readText', path: '../../etc/passwd' } }, options);
    expect(failureOf(denied)).toEqual({ code: 'tool_error', details: { errorCode: 'policy_denied' } });
    expect(options.denials).toEqual([{ op: 'readText', target: '../../etc/passwd', reason: 'parent_escape' }]);
    const write = await runner.run({ callId: 'w', args: { mode: 'fs', op: 'writeText', path: 'x.txt', text: 'x', catch: true } }, recordingOptions());
    expect(jsonOf(write)).toEqual({ caught: { code: 'policy_denied' } });
  });

  it('fetches from an allowed loopback host and refuses another', async () => {
    const runner = workerRunner('switch.mjs', { networkAllow: [`127.0.0.1:${port}`] });
    const ok = await runner.run({ callId: 'f', args: { mode: 'fetch', url: `http://127.0.0.1:${port}/hello` } }, recordingOptions());
    expect(jsonOf(ok)).toEqual({ status: 200, body: 'hi' });
    const options = recordingOptions();
    const denied = await runner.run({ callId: 'g', args: { mode: 'fetch', url: 'http://localhost.invalid/' } }, options);
    expect(failureOf(denied)).toEqual({ code: 'tool_error', details: { errorCode: 'policy_denied' } });
    expect(options.denials).toMatchObject([{ op: 'fetch', reason: 'host_not_allowed' }]);
  });
});
