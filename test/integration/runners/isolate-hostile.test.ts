// isolate runner against hostile tools: every case asserts the code, and that
// the next normal call on the same runner still works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createIsolateRunner } from '../../../src/runner/isolate/isolate-runner.js';
import type { Runner } from '../../../src/runner/types.js';
import type { EgressAttempt } from '../../../src/runner/run-types.js';
import { createSilentLogger } from '../../../src/log.js';
import { makeSpec, recordingOptions, root, useFixtureRunners } from '../../helpers/fixture-runners.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { until } from '../../helpers/wait.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

const logger = createSilentLogger();
const isolateRunner = useFixtureRunners('isolate');

/** Recovery is proven on the same runner (same isolate generation or its rebuild) with a normal call. */
async function expectRecovers(runner: Runner, args: Record<string, unknown>, expected: unknown): Promise<void> {
  expect(jsonOf(await runner.run({ callId: 'after', args }, recordingOptions()))).toEqual(expected);
}

describe('isolate runner: time', () => {
  it('stops a synchronous infinite loop with timeout, and the next call works', async () => {
    const runner = isolateRunner('switch.mjs');
    const outcome = await runner.run({ callId: 'loop', args: { mode: 'busy_loop' } }, recordingOptions(300));
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 300 } });
    await expectRecovers(runner, { mode: 'echo', value: 1 }, { echo: 1 });
  });

  it('stops a loop that starts after an await on a ctx call, and the next call works', async () => {
    const runner = isolateRunner('switch.mjs');
    const outcome = await runner.run({ callId: 'loop2', args: { mode: 'loop_after_await' } }, recordingOptions(300));
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 300 } });
    await expectRecovers(runner, { mode: 'echo', value: 2 }, { echo: 2 });
  });

  it('charges a continuation that spins after the tool returned to that call (timeout), and the next call works', async () => {
    const runner = isolateRunner('switch.mjs');
    const outcome = await runner.run({ callId: 'stray', args: { mode: 'stray_loop' } }, recordingOptions(300));
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 300 } });
    await expectRecovers(runner, { mode: 'echo', value: 9 }, { echo: 9 });
  });

  it('never holds up a concurrent call of the same tool behind a spinning call (isolates of their own)', async () => {
    const runner = isolateRunner('switch.mjs');
    const spinnerOptions = recordingOptions(2000);
    const spinning = runner.run({ callId: 'spin', args: { mode: 'progress_then_loop' } }, spinnerOptions);
    await until(() => spinnerOptions.progress.length > 0);
    const bystander = await runner.run({ callId: 'bystander', args: { mode: 'echo', value: 'innocent' } }, recordingOptions(30_000));
    expect(jsonOf(bystander)).toEqual({ echo: 'innocent' });
    expect(failureOf(await spinning)).toEqual({ code: 'timeout', details: { timeoutMs: 2000 } });
    await expectRecovers(runner, { mode: 'echo', value: 10 }, { echo: 10 });
  });

  it('runs a tool that holds its thread past the first step once more, whole, and only that run is heard', async () => {
    const runner = isolateRunner('switch.mjs');
    const options = recordingOptions(5000);
    const outcome = await runner.run({ callId: 'slow', args: { mode: 'slow_echo', ms: 150, value: 'late' } }, options);
    expect(jsonOf(outcome)).toEqual({ echo: 'late' });
    // The first run was cut at its slice and thrown away with what it asked of the host.
    expect(options.logs).toEqual([{ level: 'info', message: 'slow start' }]);
    await expectRecovers(runner, { mode: 'echo', value: 11 }, { echo: 11 });
  });

  it('times out a never-settling promise, and the next call works', async () => {
    const runner = isolateRunner('switch.mjs');
    const outcome = await runner.run({ callId: 'never', args: { mode: 'never' } }, recordingOptions(200));
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 200 } });
    await expectRecovers(runner, { mode: 'echo', value: 3 }, { echo: 3 });
  });

  it('cancels a call mid-flight when the signal aborts, and the next call works', async () => {
    const runner = isolateRunner('switch.mjs');
    const options = recordingOptions(30_000);
    const pending = runner.run({ callId: 'cancel', args: { mode: 'progress_then_never' } }, options);
    await until(() => options.progress.length > 0);
    options.controller.abort();
    expect(failureOf(await pending)).toEqual({ code: 'cancelled', details: {} });
    await expectRecovers(runner, { mode: 'echo', value: 4 }, { echo: 4 });
  });

  it('cancels a synchronous loop, and the next call works', async () => {
    const runner = isolateRunner('switch.mjs');
    const options = recordingOptions(30_000);
    const pending = runner.run({ callId: 'cancel-loop', args: { mode: 'progress_then_loop' } }, options);
    await until(() => options.progress.length > 0);
    options.controller.abort();
    expect(failureOf(await pending)).toEqual({ code: 'cancelled', details: {} });
    await expectRecovers(runner, { mode: 'echo', value: 5 }, { echo: 5 });
  });
});

describe('isolate runner: shutdown', () => {
  it('answers a call in flight with cancelled when the runner closes, and refuses new calls', async () => {
    const runner = createIsolateRunner(makeSpec('isolate', 'switch.mjs'), { logger, services });
    const options = recordingOptions(30_000);
    const pending = runner.run({ callId: 'inflight', args: { mode: 'progress_then_never' } }, options);
    await until(() => options.progress.length > 0);
    await runner.close();
    expect(failureOf(await pending)).toEqual({ code: 'cancelled', details: { reason: 'runner_closed' } });
    const after = await runner.run({ callId: 'late', args: { mode: 'echo', value: 1 } }, recordingOptions());
    expect(failureOf(after)).toEqual({ code: 'cancelled', details: { reason: 'runner_closed' } });
  });
});

describe('isolate runner: memory', () => {
  it('stops a heap bomb with memory_limit, rebuilds the isolate, and the next call works', async () => {
    const runner = isolateRunner('switch.mjs', { memoryMb: 16 });
    const outcome = await runner.run({ callId: 'bomb', args: { mode: 'heap_bomb' } }, recordingOptions(20_000));
    expect(failureOf(outcome)).toEqual({ code: 'memory_limit', details: { memoryMb: 16 } });
    await expectRecovers(runner, { mode: 'echo', value: 6 }, { echo: 6 });
  });

  it('stops a heap bomb that starts after an await with memory_limit, and the next call works', async () => {
    const runner = isolateRunner('switch.mjs', { memoryMb: 16 });
    const outcome = await runner.run({ callId: 'bomb2', args: { mode: 'heap_bomb_after_await' } }, recordingOptions(20_000));
    expect(failureOf(outcome)).toEqual({ code: 'memory_limit', details: { memoryMb: 16 } });
    await expectRecovers(runner, { mode: 'echo', value: 7 }, { echo: 7 });
  });

  it('reports an uncaught ArrayBuffer allocation failure as memory_limit', async () => {
    const runner = isolateRunner('switch.mjs', { memoryMb: 16 });
    const outcome = await runner.run({ callId: 'buffers', args: { mode: 'buffer_bomb' } }, recordingOptions(20_000));
    expect(failureOf(outcome)).toEqual({ code: 'memory_limit', details: { memoryMb: 16 } });
    await expectRecovers(runner, { mode: 'echo', value: 8 }, { echo: 8 });
  });
});

describe('isolate runner: escape attempts', () => {
  it('gives the tool no require, no process, no host globals and a frozen ctx', async () => {
    const runner = isolateRunner('escape.mjs');
    const report = jsonOf(await runner.run({ callId: 'escape', args: {} }, recordingOptions()));
    expect(report).toEqual({
      require: 'undefined',
      process: 'undefined',
      globalProcess: 'undefined',
      moduleThis: 'threw TypeError',
      functionCtor: 'undefined',
      ctxCtor: 'undefined',
      fsCtor: 'undefined',
      importMeta: 'undefined',
      globalNames: [],
      ctxKeys: ['callId', 'fetch', 'fs', 'log', 'output', 'progress'],
      ctxFrozen: true,
      dynamicImport: expect.stringMatching(/^threw /),
    });
  });

  it('keeps prototype tampering and globals from reaching the next call (fresh context per call)', async () => {
    const runner = isolateRunner('tamper.mjs');
    const clean = { polluted: null, arrayMap: 2, jsonIsNative: true, leftGlobal: null };
    // In a row (each call finds a context prepared ahead, on whichever warm isolate), then side by side.
    for (const tag of ['t1', 't2', 't3', 't4', 't5']) {
      expect(jsonOf(await runner.run({ callId: tag, args: { tag } }, recordingOptions()))).toEqual(clean);
    }
    const concurrent = await Promise.all(['c1', 'c2', 'c3', 'c4', 'c5', 'c6'].map((tag) => runner.run({ callId: tag, args: { tag } }, recordingOptions())));
    expect(concurrent.map(jsonOf)).toEqual(concurrent.map(() => clean));
  });
});

describe('isolate runner: the module top level', () => {
  it('gives every call the module state its own top level made (fresh context per call)', async () => {
    const runner = isolateRunner('top-level.mjs');
    for (const tag of ['first', 'second', 'third']) {
      expect(jsonOf(await runner.run({ callId: tag, args: { tag } }, recordingOptions()))).toEqual({ calls: 1, madeAt: ['top level', tag] });
    }
    const concurrent = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((tag) => runner.run({ callId: tag, args: { tag } }, recordingOptions())));
    expect(concurrent.map(jsonOf)).toEqual(['a', 'b', 'c', 'd', 'e', 'f'].map((tag) => ({ calls: 1, madeAt: ['top level', tag] })));
  });

  it('fails every call of a module whose top level throws as tool_error load_failed', async () => {
    const runner = isolateRunner('top-level-throws.mjs');
    for (const callId of ['t1', 't2', 't3']) {
      expect(failureOf(await runner.run({ callId, args: {} }, recordingOptions()))).toEqual({ code: 'tool_error', details: { reason: 'load_failed' } });
    }
  });

  it('ends every call of a module whose top level never ends at its deadline', async () => {
    const runner = isolateRunner('top-level-spin.mjs');
    for (const callId of ['s1', 's2']) {
      expect(failureOf(await runner.run({ callId, args: {} }, recordingOptions(1500))).code).toBe('timeout');
    }
  });
});

describe('isolate runner: code that would run outside any call', () => {
  it('gives the tool no FinalizationRegistry, so no finalizer can spin in its isolate after the call', async () => {
    const runner = isolateRunner('spin-finalizer.mjs');
    expect(jsonOf(await runner.run({ callId: 'finalizer', args: { rounds: 2000 } }, recordingOptions()))).toEqual({ registry: 'undefined' });
    // Calls after it (its isolate, the contexts prepared there, and others beside) all answer.
    const after = await Promise.all([1, 2, 3, 4, 5, 6].map((index) => runner.run({ callId: `after-${index}`, args: { rounds: 10 } }, recordingOptions())));
    expect(after.map(jsonOf)).toEqual(Array.from({ length: 6 }, () => ({ registry: 'undefined' })));
  });
});

describe('isolate runner: ctx.fs refusals', () => {
  let workspace: TempDir;
  let outside: TempDir;
  let readOnly: TempDir;

  beforeAll(async () => {
    workspace = makeTempDir('toolhost-hostile-ws-');
    outside = makeTempDir('toolhost-hostile-outside-');
    readOnly = makeTempDir('toolhost-hostile-ro-');
    await writeFile(path.join(outside.path, 'secret.txt'), 'secret');
    await writeFile(path.join(workspace.path, 'ok.txt'), 'fine');
    await writeFile(path.join(readOnly.path, 'keep.txt'), 'unchanged');
    await symlink(path.join(outside.path, 'secret.txt'), path.join(workspace.path, 'link-to-secret'));
    await symlink(outside.path, path.join(workspace.path, 'link-to-outside-dir'));
    await mkdir(path.join(workspace.path, 'inner'));
  });
  afterAll(async () => {
    workspace.remove();
    outside.remove();
    readOnly.remove();
  });

  function fsRunner(): Runner {
    return isolateRunner('fs-op.mjs', { roots: [root(workspace.path, 'read_write'), root(readOnly.path, 'read')] });
  }

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ['a ../ escape', { op: 'readText', path: '../../etc/passwd' }, 'parent_escape'],
    ['an absolute path outside the roots', { op: 'readText', path: '/etc/passwd' }, 'outside_roots'],
    ['a symlink to a file outside', { op: 'readText', path: 'link-to-secret' }, 'symlink_outside'],
    ['a path through a symlinked directory', { op: 'readText', path: 'link-to-outside-dir/secret.txt' }, 'symlink_outside'],
    ['a listing through a symlinked directory', { op: 'list', path: 'link-to-outside-dir' }, 'symlink_outside'],
    ['a write through a symlink', { op: 'writeText', path: 'link-to-outside-dir/new.txt', text: 'x' }, 'symlink_outside'],
    ['a write to a read-only root', { op: 'writeText', path: '', text: 'x' }, 'read_only_root'],
  ];

  it.each(refusals)('refuses %s: uncaught → tool_error policy_denied, onDenied called, next call works', async (_name, args, reason) => {
    const runner = fsRunner();
    const resolvedArgs = args['path'] === '' ? { ...args, path: path.join(readOnly.path, 'keep.txt') } : args;
    const options = recordingOptions();
    const outcome = await runner.run({ callId: 'deny', args: resolvedArgs }, options);
    expect(failureOf(outcome)).toEqual({ code: 'tool_error', details: { errorCode: 'policy_denied' } });
    if (!outcome.ok) expect(outcome.message).not.toContain(outside.path);
    expect(options.denials).toEqual([{ op: String(args['op']), target: String(resolvedArgs['path']), reason }]);
    await expectRecovers(runner, { op: 'readText', path: 'ok.txt' }, { value: 'fine' });
  });

  it('lets the tool catch the refusal as an Error whose code is policy_denied', async () => {
    const runner = fsRunner();
    const options = recordingOptions();
    const outcome = await runner.run({ callId: 'catch', args: { op: 'readText', path: '/etc/passwd', catch: true } }, options);
    expect(jsonOf(outcome)).toEqual({ caught: { code: 'policy_denied', isError: true } });
    expect(options.denials).toHaveLength(1);
  });

  it('leaves the read-only file and the outside directory untouched', async () => {
    expect(await readFile(path.join(readOnly.path, 'keep.txt'), 'utf8')).toBe('unchanged');
    await expect(readFile(path.join(outside.path, 'new.txt'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('isolate runner: ctx.fetch', () => {
  let server: Server;
  let port: number;
  let releaseSlow: (() => void) | undefined;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/hello') {
        response.writeHead(200, { 'content-type': 'text/plain', 'x-test': 'yes' });
        response.end('hello from loopback');
      } else if (request.url === '/redirect-inside') {
        response.writeHead(302, { location: '/hello' });
        response.end();
      } else if (request.url === '/redirect-outside') {
        response.writeHead(302, { location: 'http://localhost.invalid:9/secret' });
        response.end();
      } else if (request.url === '/redirect-other-port') {
        response.writeHead(307, { location: `http://127.0.0.1:${port + 1}/x` });
        response.end();
      } else if (request.url === '/big') {
        response.writeHead(200);
        response.end('z'.repeat(5 * 1024 * 1024));
      } else if (request.url === '/slow') {
        // Answers only when the test lets it: longer than any deadline below.
        releaseSlow = () => response.end('late');
      } else {
        response.writeHead(404);
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    releaseSlow?.();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  // localhost is allowed by name, yet resolves to loopback: the egress admission refuses it.
  function fetchRunner(overrides: { sideEffect?: 'read_only' } = {}): Runner {
    return isolateRunner('fetch.mjs', { networkAllow: [`127.0.0.1:${port}`, `localhost:${port}`], ...overrides });
  }

  it('fetches from an allowed host:port and follows a redirect that stays allowed', async () => {
    const runner = fetchRunner();
    const direct = jsonOf(await runner.run({ callId: 'f1', args: { url: `http://127.0.0.1:${port}/hello` } }, recordingOptions()));
    expect(direct).toEqual({ status: 200, ok: true, url: `http://127.0.0.1:${port}/hello`, body: 'hello from loopback' });
    const redirected = jsonOf(await runner.run({ callId: 'f2', args: { url: `http://127.0.0.1:${port}/redirect-inside` } }, recordingOptions()));
    expect(redirected).toEqual({ status: 200, ok: true, url: `http://127.0.0.1:${port}/hello`, body: 'hello from loopback' });
  });

  const refusals: Array<[string, (port: number) => string, string]> = [
    ['a host not in network.allow', () => 'http://localhost.invalid/x', 'host_not_allowed'],
    ['the allowed host on another port', (p) => `http://127.0.0.1:${p + 1}/x`, 'host_not_allowed'],
    ['a non-http scheme', () => 'file:///etc/passwd', 'scheme_not_allowed'],
    ['a redirect to a host not allowed', (p) => `http://127.0.0.1:${p}/redirect-outside`, 'redirect_host_not_allowed'],
    ['a redirect to another port', (p) => `http://127.0.0.1:${p}/redirect-other-port`, 'redirect_host_not_allowed'],
    ['a name that resolves to loopback, even when allowed', (p) => `http://localhost:${p}/hello`, 'address_loopback'],
    ['127.0.0.1 spelled in decimal', (p) => `http://2130706433:${p}/hello`, 'non_canonical_host'],
    ['127.0.0.1 spelled in octal', (p) => `http://0177.0.0.1:${p}/hello`, 'non_canonical_host'],
    ['::ffff:127.0.0.1', (p) => `http://[::ffff:127.0.0.1]:${p}/hello`, 'non_canonical_host'],
    ['::1', (p) => `http://[::1]:${p}/hello`, 'host_not_allowed'],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/', 'host_not_allowed'],
  ];

  it('holds a read_only tool to GET, HEAD and OPTIONS, and counts every attempt', async () => {
    const runner = fetchRunner({ sideEffect: 'read_only' });
    const attempts: EgressAttempt[] = [];
    const options = { ...recordingOptions(), onEgress: (attempt: EgressAttempt) => attempts.push(attempt) };
    const post = await runner.run({ callId: 'post', args: { url: `http://127.0.0.1:${port}/hello`, init: { method: 'POST', body: 'x' }, catch: true } }, options);
    expect(jsonOf(post)).toEqual({ caught: { code: 'policy_denied' } });
    expect(options.denials).toMatchObject([{ op: 'fetch', reason: 'method_not_allowed_for_class' }]);
    const get = await runner.run({ callId: 'get', args: { url: `http://127.0.0.1:${port}/hello` } }, options);
    expect(jsonOf(get)).toMatchObject({ status: 200 });
    // The POST is refused in the isolate process, before any connection; the GET is the proxy's record.
    expect(attempts.map((attempt) => [attempt.kind, attempt.method, attempt.admitted, attempt.reason])).toEqual([
      ['fetch', 'POST', false, 'method_not_allowed_for_class'],
      ['http', 'GET', true, null],
    ]);
  });

  it.each(refusals)('refuses %s with policy_denied, calls onDenied, and the next call works', async (_name, makeUrl, reason) => {
    const runner = fetchRunner();
    const options = recordingOptions();
    const outcome = await runner.run({ callId: 'deny', args: { url: makeUrl(port) } }, options);
    expect(failureOf(outcome)).toEqual({ code: 'tool_error', details: { errorCode: 'policy_denied' } });
    expect(options.denials).toHaveLength(1);
    expect(options.denials[0]).toMatchObject({ op: 'fetch', reason });
    const next = jsonOf(await runner.run({ callId: 'ok', args: { url: `http://127.0.0.1:${port}/hello` } }, recordingOptions()));
    expect(next).toMatchObject({ status: 200 });
  });

  it('refuses every request when network.allow is empty', async () => {
    const runner = isolateRunner('fetch.mjs');
    const options = recordingOptions();
    const outcome = await runner.run({ callId: 'none', args: { url: `http://127.0.0.1:${port}/hello`, catch: true } }, options);
    expect(jsonOf(outcome)).toEqual({ caught: { code: 'policy_denied' } });
    expect(options.denials).toMatchObject([{ op: 'fetch', reason: 'host_not_allowed' }]);
  });

  it('bounds the response body', async () => {
    const runner = fetchRunner();
    const outcome = await runner.run({ callId: 'big', args: { url: `http://127.0.0.1:${port}/big`, catch: true } }, recordingOptions());
    expect(jsonOf(outcome)).toEqual({ caught: { code: 'too_large' } });
  });

  it('holds the deadline while the tool awaits a slow ctx.fetch, and the next call works', async () => {
    const runner = fetchRunner();
    const outcome = await runner.run({ callId: 'slow', args: { url: `http://127.0.0.1:${port}/slow` } }, recordingOptions(300));
    expect(failureOf(outcome)).toEqual({ code: 'timeout', details: { timeoutMs: 300 } });
    const next = jsonOf(await runner.run({ callId: 'ok', args: { url: `http://127.0.0.1:${port}/hello` } }, recordingOptions()));
    expect(next).toMatchObject({ status: 200, body: 'hello from loopback' });
  });
});
