// A host that dies (SIGKILL, the kernel's out-of-memory killer) while its spawner
// is handing over the pipes of tools it just started: Node holds the spawner's
// 'disconnect' back until every handle sent is acknowledged, which a dead host
// never does. The spawner must still notice, kill what it started and exit.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { findMarkedProcesses, isAlive, pollUntil, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';

const FIXTURE = join(REPO_ROOT, 'test/fixtures/spawner-host/killed-mid-spawn.mjs');

beforeAll(() => ensureBuilt(), 300_000);

let marker: string | undefined;
let spawnerPid: number | undefined;
afterEach(async () => {
  if (marker !== undefined) await waitForNoMarkedProcesses(marker, 1_000, { killSurvivors: true });
  if (spawnerPid !== undefined && isAlive(spawnerPid)) process.kill(spawnerPid, 'SIGKILL');
  spawnerPid = undefined;
  marker = undefined;
});

describe('a host killed while its spawner hands over the pipes of the tools it started', () => {
  it('leaves no spawner and no tool behind', async () => {
    marker = `toolhost-spawner-killed-${process.pid}-${Date.now()}`;
    const host = spawn(process.execPath, [FIXTURE, marker], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    host.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const signal = await new Promise((resolve) => host.once('exit', (_code, exitSignal) => resolve(exitSignal)));
    expect(signal).toBe('SIGKILL');
    const pid = (spawnerPid = Number(out.trim()));
    expect(pid).toBeGreaterThan(0);
    // The spawner exits, and the tools it started (the host saw one started) go with it.
    const tag = marker;
    const spawnerAlive = await pollUntil(() => ({ done: !isAlive(pid) && findMarkedProcesses(tag).length === 0, value: isAlive(pid) }), 10_000);
    expect(spawnerAlive).toBe(false);
    expect(findMarkedProcesses(tag)).toEqual([]);
  });
});
