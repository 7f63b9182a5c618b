// Two hosts in one process share nothing of their sandboxes (STYLE section 2):
// each has its own spawner, process groups, pids cgroups, machine facts,
// prepared one-shot sandboxes, isolate processes and upstream server processes,
// built by host.ts and passed down; closing one leaves the other serving.
// (test/unit/module-state.test.ts keeps src/ free of module state,
// so there is no default instance two hosts could fall back on.)
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findMarkedProcesses, isAlive, pollUntil } from '../../helpers/proc-scan.js';
import { closeAllHosts, FIXTURE_MANIFESTS, resultOf, startHost, textOf, type TestHost } from '../../helpers/supervisor-host.js';

const SERVERS = fileURLToPath(new URL('../../fixtures/servers', import.meta.url));
// The fixture tools plus one upstream server (hostile.mjs in its well-behaved `ok` tool).
const serverDir = mkdtempSync(join(tmpdir(), 'toolhost-two-hosts-servers-'));
copyFileSync(join(SERVERS, 'faults.yaml'), join(serverDir, 'faults.yaml'));
copyFileSync(join(SERVERS, 'hostile.mjs'), join(serverDir, 'hostile.mjs'));
const POLICY = 'limits:\n  maxMemoryMb: 2048';

afterAll(async () => {
  await closeAllHosts();
  rmSync(serverDir, { recursive: true, force: true });
});

/** Leaders of `host`'s upstream server sandboxes (bubblewrap, running hostile.mjs on its workspace) that `of`'s groups track. */
function serverLeaders(host: TestHost, of: TestHost = host): number[] {
  return findMarkedProcesses(host.workspace)
    .filter((found) => found.cmdline.includes('hostile.mjs'))
    .map((found) => found.pid)
    .filter((pid) => of.services.groups.has(pid));
}

describe('two hosts in one process', () => {
  it('have their own spawners, groups, cgroups, facts, prepared sandboxes, isolate and server processes', async () => {
    const start = () => startHost({ manifestDirs: [FIXTURE_MANIFESTS, serverDir], policy: POLICY });
    const [a, b] = await Promise.all([start(), start()]);
    for (const host of [a, b]) {
      resultOf(await host.call('emit', { kind: 'ok' }));
      expect(textOf(await host.call('echo', { value: 'hi' }))).toBe('hi');
      expect(textOf(await host.call('faults__ok'))).toBe('ok');
    }
    expect(a.services).not.toBe(b.services);
    const spawners = [a.services.spawner.pid, b.services.spawner.pid];
    expect(spawners.every((pid) => typeof pid === 'number')).toBe(true);
    expect(new Set(spawners).size).toBe(2);
    // Each learned the machine for itself (bubblewrap's probe, the seccomp filter, ...).
    expect(a.services.facts).not.toBe(b.services.facts);
    expect(a.services.facts.size).toBeGreaterThan(0);
    expect(b.services.facts.size).toBeGreaterThan(0);
    // The one-shot tool keeps its next sandboxes prepared, each in a cgroup of its host's.
    expect(a.services.prepared.size).toBe(1);
    expect(b.services.prepared.size).toBe(1);
    expect(a.services.cgroups.ownDirs.length).toBeGreaterThan(0);
    expect(b.services.cgroups.ownDirs.length).toBeGreaterThan(0);
    expect(a.services.cgroups.ownDirs.filter((dir) => b.services.cgroups.ownDirs.includes(dir))).toEqual([]);
    expect(a.services.isolateProcesses.aliveCount).toBe(1);
    expect(b.services.isolateProcesses.aliveCount).toBe(1);
    // Each host's upstream server processes (the one that listed its tools, kept for the read-only
    // profile, and the one its call started for the declared profile) are tracked by its groups only.
    const serversOfA = serverLeaders(a);
    const serversOfB = serverLeaders(b).sort();
    expect(serversOfA).toHaveLength(2);
    expect(serversOfB).toHaveLength(2);
    expect(serverLeaders(a, b)).toEqual([]);
    expect(serverLeaders(b, a)).toEqual([]);

    // A's groups reach A's servers and nothing of B's: SIGKILLing every group A tracks ends
    // its servers; B's go on answering in the same process.
    a.services.groups.killAllNow();
    const aliveOfA = () => serversOfA.filter(isAlive);
    expect(await pollUntil(() => ({ done: aliveOfA().length === 0, value: aliveOfA() }), 10_000)).toEqual([]);
    expect(serversOfB.every(isAlive)).toBe(true);
    expect(textOf(await b.call('faults__ok'))).toBe('ok');
    expect(serverLeaders(b).sort()).toEqual(serversOfB);

    // Closing one host takes down its spawner and leaves the other serving.
    const [spawnerOfA] = spawners;
    await a.close();
    expect(await pollUntil(() => ({ done: !isAlive(spawnerOfA ?? 0), value: isAlive(spawnerOfA ?? 0) }), 10_000)).toBe(false);
    expect(a.services.cgroups.ownDirs).toEqual([]);
    expect(a.services.groups.size).toBe(0);
    resultOf(await b.call('emit', { kind: 'ok' }));
    expect(textOf(await b.call('echo', { value: 'still' }))).toBe('still');
    expect(textOf(await b.call('faults__ok'))).toBe('ok');
    expect(b.services.spawner.pid).toBe(spawners[1]);
    expect(serverLeaders(b).sort()).toEqual(serversOfB);
  }, 120_000);
});
