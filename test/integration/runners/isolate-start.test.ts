// Starting an isolate process (SPEC 3, 3.1): the start is never a call's time
// (a first call with timeoutMs 1000 whose process takes longer than that to
// start still runs, and its tool's throw is tool_error); a start that fails is
// sandbox_unavailable with the reason; a tool module whose top level exhausts
// its heap while the process starts fails every call with memory_limit
// (recovery repair: fix the module), starts no process per call, and is tried
// again once its entry file changes.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIsolateRunner } from '../../../src/runner/isolate/isolate-runner.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { useProcessServices } from '../../helpers/process-services.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { createSilentLogger } from '../../../src/log.js';
import { fixturePath, makeSpec, recordingOptions, useRunnerCleanup } from '../../helpers/fixture-runners.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';
import { readFile } from 'node:fs/promises';

const services = useProcessServices();
const track = useRunnerCleanup();

describe('the start of an isolate process', () => {
  let folder: TempDir;
  beforeAll(async () => {
    folder = makeTempDir('toolhost-isolate-start-');
  });
  afterAll(() => folder.remove());

  it("never counts against the first call: a start held past the call's timeoutMs, then a throw, is tool_error", async () => {
    // The entry is a FIFO: the isolate process, reading it while it starts, waits until the test writes it.
    const entryPath = path.join(folder.path, 'slow-start.mjs');
    execFileSync('mkfifo', [entryPath]);
    const runner = track(createIsolateRunner(makeSpec('isolate', 'throws.mjs', { manifestDir: folder.path, entryPath }), { logger: createSilentLogger(), services }));
    const options = recordingOptions(1000);
    const call = runner.run({ callId: 'first', args: { message: 'at once', code: 'nope' } }, options);
    // A deadline of the same length armed after the call's fires after the call's would have.
    await new CallControl([], { timeoutMs: 1000 }).stopped;
    expect(options.control.reason).toBeUndefined();
    await writeFile(entryPath, await readFile(fixturePath('isolate', 'throws.mjs'), 'utf8'));
    expect(failureOf(await call)).toEqual({ code: 'tool_error', details: { errorCode: 'nope' } });
  });

  it('that fails is sandbox_unavailable with the reason: an entry file that cannot be read', async () => {
    const runner = track(
      createIsolateRunner(makeSpec('isolate', 'echo.mjs', { manifestDir: folder.path, entryPath: path.join(folder.path, 'gone.mjs') }), { logger: createSilentLogger(), services }),
    );
    for (const callId of ['a', 'b']) {
      expect(failureOf(await runner.run({ callId, args: {} }, recordingOptions()))).toEqual({
        code: 'sandbox_unavailable',
        details: { reason: "the tool's entry file cannot be read (ENOENT)" },
      });
    }
  });
});

describe('a module whose top level exhausts its heap', () => {
  let folder: TempDir;
  beforeAll(async () => {
    folder = makeTempDir('toolhost-top-level-oom-');
  });
  afterAll(() => folder.remove());

  // Two ways the same exhaustion ends: V8's fatal out-of-memory ends the process (a Set grown
  // without end), or isolated-vm disposes the isolate at its limit first (arrays of strings),
  // also after a top level slower than the 1 s one run ahead after the start may take (the
  // start's may take 10 s, so the phase never depends on the machine's load).
  it.each([
    ['V8 ends the process', 'top-level-heap-bomb.mjs'],
    ['isolated-vm disposes the isolate', 'top-level-array-bomb.mjs'],
    ['isolated-vm disposes the isolate after 1.5 s of work', 'top-level-slow-array-bomb.mjs'],
  ])('%s: fails every call with memory_limit (top_level_out_of_memory), starts no process per call, and is tried again once the file changes', async (_how, fixture) => {
    const entryPath = path.join(folder.path, `${fixture}-tool.mjs`);
    await writeFile(entryPath, await readFile(fixturePath('isolate', fixture), 'utf8'));
    const log = recordingLogger();
    const runner = track(createIsolateRunner(makeSpec('isolate', fixture, { manifestDir: folder.path, entryPath, memoryMb: 32 }), { logger: log.logger, services }));
    for (const callId of ['a', 'b', 'c']) {
      expect(failureOf(await runner.run({ callId, args: {} }, recordingOptions()))).toEqual({
        code: 'memory_limit',
        details: { memoryMb: 32, reason: 'top_level_out_of_memory' },
      });
    }
    // One start failed (the one ahead of the first call); the calls after it got its verdict.
    expect(log.lines().filter((line) => line['msg'] === 'isolate process could not start')).toEqual([expect.objectContaining({ code: 'memory_limit' })]);
    await writeFile(entryPath, 'export default async function fixed() { return { fixed: true }; }\n');
    expect(jsonOf(await runner.run({ callId: 'fixed', args: {} }, recordingOptions()))).toEqual({ fixed: true });
  });
});
