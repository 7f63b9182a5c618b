// Messages of an isolate process for calls that have ended (SPEC 3.1: bounded
// and counted per call; a call's failure never fails another's): a refusal
// that settles after its call answered is not sent at all, and whatever such
// frames a hostile isolate process sends anyway are dropped and counted in the
// log at a bounded rate, never a reason to kill the process under another
// caller's call of the same tool. A frame for a call the host never started
// still breaks the protocol.
import { symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIsolateRunner } from '../../../src/runner/isolate/isolate-runner.js';
import { IsolateProcess } from '../../../src/runner/isolate/isolate-process.js';
import { spawnTool } from '../../../src/runner/process/spawn.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { useProcessServices } from '../../helpers/process-services.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { toRunOutcome } from '../../../src/runner/tool-envelope.js';
import { makeSpec, recordingOptions, root, useRunnerCleanup } from '../../helpers/fixture-runners.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';

const services = useProcessServices();
const track = useRunnerCleanup();
const LATE_LINE = 'isolate process sent frames for calls that had ended; dropped';
const PEER = fileURLToPath(new URL('../../fixtures/isolate-process/late-frames-peer.mjs', import.meta.url));

describe('refusals that settle after their call ended', () => {
  let workspace: TempDir;
  beforeAll(async () => {
    workspace = makeTempDir('toolhost-late-');
    // A link out of the workspace: reading through it is refused once the real path is known (asynchronously).
    await symlink('/etc', path.join(workspace.path, 'escape'));
  });
  afterAll(() => workspace.remove());

  it("cannot fail another caller's concurrent call of the same tool, and never reach the host", async () => {
    const log = recordingLogger();
    const runner = track(createIsolateRunner(makeSpec('isolate', 'late-refusals.mjs', { roots: [root(workspace.path, 'read')] }), { logger: log.logger, services }));
    let innocentSettled = false;
    const innocent = runner.run({ callId: 'innocent', args: { mode: 'wait', flag: 'release' } }, recordingOptions(120_000)).finally(() => {
      innocentSettled = true;
    });
    // 60 calls, each leaving 31 refusals to settle after it answered: more than a thousand late refusals in all.
    for (let index = 0; index < 60; index += 1) {
      const options = recordingOptions();
      const outcome = await runner.run({ callId: `attack-${index}`, args: { mode: 'scatter', path: 'escape/shadow', count: 31 } }, options);
      expect(jsonOf(outcome)).toEqual({ caught: 'policy_denied' });
      expect(options.denials[0]).toEqual({ op: 'readText', target: 'escape/shadow', reason: 'symlink_outside' });
    }
    expect(innocentSettled).toBe(false);
    await writeFile(path.join(workspace.path, 'release'), '');
    expect(jsonOf(await innocent)).toEqual({ innocent: true, waited: true });
    // The isolate process sent nothing for the ended calls.
    expect(log.lines().filter((line) => line['msg'] === LATE_LINE)).toEqual([]);
  });
});

describe('a hostile isolate process that sends frames for ended calls', () => {
  /** The host's client of one process running the hostile peer instead of sandbox/isolate/isolate-process.mjs. */
  async function startPeer() {
    const log = recordingLogger();
    const tool = await spawnTool([process.execPath, PEER], { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, tmpdir(), services);
    const peer = new IsolateProcess(makeSpec('isolate', 'echo.mjs'), tool, { cwd: tmpdir(), dispose: async () => undefined }, log.logger);
    expect(await peer.whenReady(60_000)).toEqual({ ok: true });
    const run = async (callId: string, args: Record<string, unknown>) => toRunOutcome(await peer.run({ callId, args }, recordingOptions()), 0);
    return { peer, log, run };
  }

  it('drops them, logs them once per interval with their count, and keeps serving the call beside', async () => {
    const { peer, log, run } = await startPeer();
    const innocent = run('innocent', { mode: 'hold' });
    expect(jsonOf(await run('flood', { mode: 'flood', count: 3000 }))).toEqual({ flooded: true });
    // Answered after the 3000 late frames were read: the held call is answered, not crashed.
    expect(jsonOf(await run('release', { mode: 'release' }))).toEqual({ released: true });
    expect(jsonOf(await innocent)).toEqual({ innocent: true });
    expect(peer.isAlive).toBe(true);
    expect(log.lines().filter((line) => line['msg'] === LATE_LINE)).toEqual([expect.objectContaining({ lateFrames: 1, lateFramesTotal: 1 })]);
    peer.kill();
    await peer.exited;
    // What was counted since is logged when the process ends.
    expect(
      log
        .lines()
        .filter((line) => line['msg'] === LATE_LINE)
        .map((line) => [line['lateFrames'], line['lateFramesTotal']]),
    ).toEqual([
      [1, 1],
      [2999, 3000],
    ]);
  });

  it('still breaks the protocol with a frame for a call that was never started', async () => {
    const { peer, run } = await startPeer();
    const held = run('held', { mode: 'hold' });
    void run('forge', { mode: 'forge' });
    expect(failureOf(await held)).toEqual({ code: 'tool_crashed', details: { reason: 'protocol_violation' } });
    await peer.exited;
  });
});
