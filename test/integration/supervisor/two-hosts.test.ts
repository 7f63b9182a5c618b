// Two hosts in one process share nothing of their sandboxes (STYLE section 2):
// each has its own spawner, process groups, pids cgroups, prepared one-shot
// sandboxes and isolate processes, built by host.ts and passed down; closing one
// leaves the other serving.
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive, pollUntil } from '../../helpers/proc-scan.js';
import { spawnerPid } from '../../../src/runner/process/spawner-client.js';
import { closeAllHosts, resultOf, startHost, textOf } from './harness.js';

afterAll(() => closeAllHosts());

describe('two hosts in one process', () => {
  it('have their own spawners, cgroups, prepared sandboxes and isolate processes', async () => {
    const [a, b] = await Promise.all([startHost(), startHost()]);
    for (const host of [a, b]) {
      resultOf(await host.call('emit', { kind: 'ok' }));
      expect(textOf(await host.call('echo', { value: 'hi' }))).toBe('hi');
    }
    expect(a.services).not.toBe(b.services);
    const spawners = [a.services.spawner.pid, b.services.spawner.pid];
    expect(spawners.every((pid) => typeof pid === 'number')).toBe(true);
    expect(new Set(spawners).size).toBe(2);
    // Neither is the spawner of callers without a host.
    expect(spawners).not.toContain(spawnerPid());
    // The one-shot tool keeps its next sandboxes prepared, each in a cgroup of its host's.
    expect(a.services.prepared.size).toBe(1);
    expect(b.services.prepared.size).toBe(1);
    expect(a.services.cgroups.ownDirs.length).toBeGreaterThan(0);
    expect(b.services.cgroups.ownDirs.length).toBeGreaterThan(0);
    expect(a.services.cgroups.ownDirs.filter((dir) => b.services.cgroups.ownDirs.includes(dir))).toEqual([]);
    expect(a.services.isolateProcesses.aliveCount).toBe(1);
    expect(b.services.isolateProcesses.aliveCount).toBe(1);

    // Closing one host takes down its spawner and leaves the other serving.
    const [spawnerOfA] = spawners;
    await a.close();
    expect(await pollUntil(() => ({ done: !isAlive(spawnerOfA ?? 0), value: isAlive(spawnerOfA ?? 0) }), 10_000)).toBe(false);
    expect(a.services.cgroups.ownDirs).toEqual([]);
    resultOf(await b.call('emit', { kind: 'ok' }));
    expect(textOf(await b.call('echo', { value: 'still' }))).toBe('still');
    expect(b.services.spawner.pid).toBe(spawners[1]);
  });
});
