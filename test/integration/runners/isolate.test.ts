// isolate runner: normal calls, ctx plumbing and result checks.
import { MAX_TOOL_MESSAGE_CHARS } from '../../../src/runner/tool-envelope.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Runner } from '../../../src/runner/types.js';
import type { RunOutcome } from '../../../src/runner/run-types.js';
import { recordingOptions, root, useFixtureRunners } from '../../helpers/fixture-runners.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';

const isolateRunner = useFixtureRunners('isolate');

describe('isolate runner: normal calls', () => {
  it('calls the default export with a copy of the arguments and the call id', async () => {
    const runner = isolateRunner('echo.mjs');
    const args = { text: 'héllo', list: [1, 2, { deep: true }] };
    const outcome = await runner.run({ callId: 'call-1', args }, recordingOptions());
    expect(jsonOf(outcome)).toEqual({ echo: args, callId: 'call-1' });
    expect(runner.mode).toBe('isolate');
  });

  it('serves many calls in a row from fresh contexts', async () => {
    const runner = isolateRunner('echo.mjs');
    for (let index = 0; index < 20; index += 1) {
      const outcome = await runner.run({ callId: `c${index}`, args: { index } }, recordingOptions());
      expect(jsonOf(outcome)).toEqual({ echo: { index }, callId: `c${index}` });
    }
  });

  it('never charges an innocent call for the garbage of earlier contexts (a small heap, many calls)', async () => {
    // Released contexts are collected late; with a 16 MB limit one call in ~140 used to fail with memory_limit.
    const runner = isolateRunner('echo.mjs', { memoryMb: 16 });
    const codes: string[] = [];
    for (let index = 0; index < 600; index += 1) {
      const outcome = await runner.run({ callId: `g${index}`, args: { index } }, recordingOptions());
      if (!outcome.ok) codes.push(outcome.code);
    }
    expect(codes).toEqual([]);
  });

  it('runs concurrent calls side by side', async () => {
    const runner = isolateRunner('echo.mjs');
    const outcomes = await Promise.all([0, 1, 2, 3, 4].map((index) => runner.run({ callId: `p${index}`, args: { index } }, recordingOptions())));
    outcomes.forEach((outcome, index) => expect(jsonOf(outcome)).toEqual({ echo: { index }, callId: `p${index}` }));
  });

  it('turns a thrown error into tool_error with the message and the error code', async () => {
    const runner = isolateRunner('throws.mjs');
    const outcome = await runner.run({ callId: 't', args: { message: 'bad input', code: 'bad' } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'tool_error', details: { errorCode: 'bad' } });
    if (!outcome.ok) expect(outcome.message).toBe('bad input');
  });

  it('bounds the tool error message', async () => {
    const runner = isolateRunner('throws.mjs');
    const outcome = await runner.run({ callId: 't', args: { message: 'x'.repeat(50_000) } }, recordingOptions());
    expect(failureOf(outcome).code).toBe('tool_error');
    // Bounded generously here: the supervisor redacts, then cuts to what the caller sees.
    if (!outcome.ok) expect(outcome.message.length).toBeLessThanOrEqual(MAX_TOOL_MESSAGE_CHARS);
  });

  it('reports a module that does not compile, or imports, as tool_error', async () => {
    const broken = await isolateRunner('syntax-error.mjs').run({ callId: 's', args: {} }, recordingOptions());
    expect(failureOf(broken)).toEqual({ code: 'tool_error', details: { reason: 'load_failed' } });
    const importing = await isolateRunner('imports.mjs').run({ callId: 'i', args: {} }, recordingOptions());
    expect(failureOf(importing)).toEqual({ code: 'tool_error', details: { reason: 'load_failed' } });
  });

  it('forwards progress and log events', async () => {
    const runner = isolateRunner('progress-log.mjs');
    const options = recordingOptions();
    const outcome = await runner.run({ callId: 'p', args: {} }, options);
    expect(jsonOf(outcome)).toEqual({ done: true });
    expect(options.progress).toEqual([
      { progress: 1, total: 2, message: 'half way' },
      { progress: 2, total: 2 },
    ]);
    expect(options.logs).toEqual([{ level: 'warn', message: 'careful' }]);
  });

  it('refuses a result larger than floodCapBytes with output_limit', async () => {
    const runner = isolateRunner('echo.mjs', { floodCapBytes: 100 });
    const outcome = await runner.run({ callId: 'big', args: { text: 'y'.repeat(500) } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'output_limit', details: { reason: 'flood_cap', limit: 100 } });
  });
});

describe('isolate runner: results that are not JSON', () => {
  // Where the value is, as a JSON pointer, whenever there is one to name.
  const cases: Array<[string, Record<string, string>]> = [
    ['bigint', { reason: 'bigint', path: '/n' }],
    ['cycle', { reason: 'not_serializable' }],
    ['function', { reason: 'function', path: '/f' }],
    ['deep_function', { reason: 'function', path: '/a/b~1c/1/f' }],
    ['undefined', { reason: 'undefined', path: '/' }],
    ['undefined_in_array', { reason: 'undefined', path: '/list/1' }],
    ['symbol', { reason: 'symbol', path: '/0' }],
    ['nan', { reason: 'non_finite_number', path: '/n' }],
    ['deep', { reason: 'too_deep' }],
  ];
  it.each(cases)('%s → invalid_output %j, and the next call works', async (kind, details) => {
    const runner = isolateRunner('bad-output.mjs');
    const outcome = await runner.run({ callId: kind, args: { kind } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'invalid_output', details });
    expect(jsonOf(await runner.run({ callId: 'next', args: { kind: 'fine' } }, recordingOptions()))).toBe('fine');
  });

  it('leaves out an object property that is undefined, as JSON.stringify does', async () => {
    const runner = isolateRunner('bad-output.mjs');
    const outcome = await runner.run({ callId: 'u', args: { kind: 'nested_undefined' } }, recordingOptions());
    expect(jsonOf(outcome)).toEqual({ kept: 1, nested: { kept: [2] } });
  });
});

describe('isolate runner: ctx.fs', () => {
  let workspace: TempDir;
  let readOnly: TempDir;

  beforeAll(async () => {
    workspace = makeTempDir('toolhost-isolate-ws-');
    readOnly = makeTempDir('toolhost-isolate-ro-');
    await writeFile(path.join(workspace.path, 'hello.txt'), 'hello world');
    await mkdir(path.join(workspace.path, 'sub'));
    await writeFile(path.join(workspace.path, 'sub', 'a.txt'), 'aaa');
    await writeFile(path.join(readOnly.path, 'ro.txt'), 'read only');
  });
  afterAll(async () => {
    workspace.remove();
    readOnly.remove();
  });

  function fsRunner(): Runner {
    return isolateRunner('fs-op.mjs', { roots: [root(workspace.path, 'read_write'), root(readOnly.path, 'read')] });
  }

  it('reads, writes, lists and stats inside the roots', async () => {
    const runner = fsRunner();
    const read = await runner.run({ callId: 'r', args: { op: 'readText', path: 'hello.txt' } }, recordingOptions());
    expect(jsonOf(read)).toEqual({ value: 'hello world' });

    const write = await runner.run({ callId: 'w', args: { op: 'writeText', path: 'new/dir/out.txt', text: 'written ✓' } }, recordingOptions());
    expect(jsonOf(write)).toEqual({ value: { bytes: Buffer.byteLength('written ✓') } });
    const readBack = await runner.run({ callId: 'r2', args: { op: 'readText', path: 'new/dir/out.txt' } }, recordingOptions());
    expect(jsonOf(readBack)).toEqual({ value: 'written ✓' });

    const list = await runner.run({ callId: 'l', args: { op: 'list', path: 'sub' } }, recordingOptions());
    expect(jsonOf(list)).toEqual({ value: [{ name: 'a.txt', type: 'file', size: 3 }] });

    const stat = (await runner.run({ callId: 's', args: { op: 'stat', path: 'hello.txt' } }, recordingOptions())) as RunOutcome;
    const statValue = jsonOf(stat) as { value: { type: string; size: number; mtimeMs: number } };
    expect(statValue.value.type).toBe('file');
    expect(statValue.value.size).toBe(11);
    expect(typeof statValue.value.mtimeMs).toBe('number');

    const absolute = await runner.run({ callId: 'a', args: { op: 'readText', path: path.join(readOnly.path, 'ro.txt') } }, recordingOptions());
    expect(jsonOf(absolute)).toEqual({ value: 'read only' });
  });

  it('gives the tool a not_found code without naming the host path', async () => {
    const runner = fsRunner();
    const outcome = await runner.run({ callId: 'nf', args: { op: 'readText', path: 'missing.txt' } }, recordingOptions());
    expect(failureOf(outcome)).toEqual({ code: 'tool_error', details: { errorCode: 'not_found' } });
    if (!outcome.ok) expect(outcome.message).not.toContain(workspace.path);
  });
});
