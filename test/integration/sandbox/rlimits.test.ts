// Resource limits hold inside the sandbox, in both isolation modes: memory from
// memoryMb (a memory cgroup; an address-space cap only where none can be used),
// file size, process count (a pids cgroup: RLIMIT_NPROC does not bind root),
// and CPU seconds from the timeout.
import { existsSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeCgroups, SandboxCgroups, sweepCgroups, type SandboxCgroup } from '../../../src/runner/bwrap/sandbox-cgroups.js';
import { SandboxFacts } from '../../../src/runner/bwrap/sandbox-facts.js';
import { DEFAULT_PROCESSES } from '../../../src/runner/bwrap/rlimits.js';
import { resolveSandboxArgv } from '../../../src/runner/process/process-sandbox.js';
import { createSilentLogger } from '../../../src/log.js';
import { buildSandboxArgv } from '../../../src/runner/bwrap/argv.js';
import { MARKER_VARIABLE, probeSpec, runPrefix, runProbe, runSandboxed, useSandboxTest, waitForNoMarkedProcessesOrKill } from '../../helpers/sandbox-run.js';
import { newMarker } from '../../helpers/proc-scan.js';
import { makeTempDir } from '../../helpers/temp-dir.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

describe.each(['namespace', 'none'] as const)('isolation %s: resource limits', (isolation) => {
  const sandbox = useSandboxTest('toolhost-sbx-limits-');

  it('holds memoryMb by the memory cgroup: the kernel kills a process that uses more, and counts the OOM kill', async () => {
    const spec = probeSpec(sandbox.marker, { isolation, memoryMb: 128, roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    expect(await runProbe(spec, { cwd: sandbox.workspace.path }, [{ op: 'alloc', mb: 16 }])).toEqual([{ ok: 16 }]);
    const cgroup = await createCgroup(spec.memoryMb);
    const run = await runSandboxed(spec, { cwd: sandbox.workspace.path, cgroup }, JSON.stringify({ ops: [{ op: 'alloc', mb: 256 }] }));
    // SIGKILL from the OOM killer, reported by bubblewrap as 128 + 9.
    expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({ exitCode: 128 + 9, stdout: '' });
    expect(await services.cgroups.oomKills(cgroup)).toBeGreaterThan(0);
  });

  it('without a memory controller, caps each process at memoryMb of address space instead (the fallback)', async () => {
    const spec = probeSpec(sandbox.marker, { isolation, memoryMb: 128, roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const fallback = withoutMemoryController();
    try {
      const results = await runProbe(spec, { cwd: sandbox.workspace.path, services: fallback }, [
        { op: 'alloc', mb: 16 },
        { op: 'alloc', mb: 256 },
      ]);
      expect(results).toEqual([{ ok: 16 }, { error: 'MemoryError' }]);
    } finally {
      await fallback.cgroups.close();
    }
  });

  it('stops a write at the file-size limit', async () => {
    const spec = probeSpec(sandbox.marker, { isolation, roots: [{ path: sandbox.workspace.path, access: 'read_write' }] });
    const target = join(sandbox.workspace.path, 'big.bin');
    const results = await runProbe(spec, { cwd: sandbox.workspace.path, limits: { fileSizeBytes: 1024 * 1024 } }, [{ op: 'write_bytes', path: target, bytes: 4 * 1024 * 1024 }]);
    expect(results).toEqual([{ error: 'EFBIG' }]);
    expect(statSync(target).size).toBeLessThanOrEqual(1024 * 1024);
  });

  it('stops a bounded fork bomb at the process limit with EAGAIN', async () => {
    const spec = probeSpec(sandbox.marker, { isolation, roots: [{ path: sandbox.workspace.path, access: 'read' }] });
    const [result] = await runProbe(spec, { cwd: sandbox.workspace.path, limits: { processes: 20 } }, [{ op: 'fork', count: 100 }]);
    const facts = (result as { ok: { forked: number; error: string | null } }).ok;
    expect(facts.error).toBe('EAGAIN');
    expect(facts.forked).toBeLessThan(20);
  });

  it('gives the tool exactly the limits asked for, soft and hard (the gate shell sets them where it is dash, else prlimit); memory by its cgroup, no address-space cap', async () => {
    const spec = probeSpec(sandbox.marker, {
      isolation,
      memoryMb: 96,
      command: ['/bin/cat', '/proc/self/limits'],
      env: { PATH: '/usr/bin:/bin', [MARKER_VARIABLE]: sandbox.marker },
      roots: [{ path: sandbox.workspace.path, access: 'read' }],
    });
    // 1 MiB is whole 512-byte blocks (dash's ulimit -f); 1000 bytes is not, so prlimit sets that one.
    for (const fileSizeBytes of [1024 * 1024, 1000]) {
      const cgroup = await createCgroup(spec.memoryMb);
      const run = await runSandboxed(spec, { cwd: sandbox.workspace.path, timeoutMs: 4000, limits: { fileSizeBytes, openFiles: 77 }, cgroup });
      expect(run.exitCode).toBe(0);
      const limit = (name: string) => new RegExp(`^${name}\\s+(\\S+)\\s+(\\S+)`, 'm').exec(run.stdout)?.slice(1, 3);
      expect(limit('Max address space')).toEqual(['unlimited', 'unlimited']);
      expect(readMemoryLimit(cgroup)).toBe(96 * 1024 * 1024);
      // 4 s rounded up plus the margin; SIGKILL one second after SIGXCPU.
      expect(limit('Max cpu time')).toEqual(['6', '7']);
      expect(limit('Max file size')).toEqual([String(fileSizeBytes), String(fileSizeBytes)]);
      expect(limit('Max open files')).toEqual(['77', '77']);
    }
  });

  it('kills a busy loop at the CPU limit derived from the timeout', async () => {
    const spec = probeSpec(sandbox.marker, {
      isolation,
      command: ['/bin/sh', '-c', 'while :; do :; done'],
      env: { PATH: '/usr/bin:/bin', [MARKER_VARIABLE]: sandbox.marker },
      roots: [{ path: sandbox.workspace.path, access: 'read' }],
    });
    // timeoutMs 1 → 1 s + the 2 s margin: SIGXCPU at 3 CPU seconds, SIGKILL at 4.
    const argv = buildSandboxArgv(spec, { services, cwd: sandbox.workspace.path, timeoutMs: 1 });
    expect(argv.includes('--cpu=3:4') || argv.some((arg) => arg.includes('ulimit -t 4 && ulimit -S -t 3 && '))).toBe(true);
    const run = await runSandboxed(spec, { cwd: sandbox.workspace.path, timeoutMs: 1 });
    // bubblewrap reports a child killed by a signal as 128 + the signal number (SIGXCPU = 24).
    expect(run.exitCode).toBe(128 + 24);
  });
});

describe('sandbox cgroups (cgroup v1 here: a pids and a memory hierarchy)', () => {
  it('are available here, joined by the sandbox, and swept in both hierarchies once it has finished', async () => {
    expect(probeCgroups(services.facts)).toMatchObject({ pids: { ok: true, version: 1 }, memory: { ok: true, version: 1 } });
    const marker = newMarker('sandbox');
    const workspace = makeTempDir('toolhost-sbx-cgroup-');
    try {
      const spec = probeSpec(marker, { roots: [{ path: workspace.path, access: 'read' }] });
      const used = cgroupDirsOf(buildSandboxArgv(spec, { services, cwd: workspace.path }));
      const unused = cgroupDirsOf(buildSandboxArgv(spec, { services, cwd: workspace.path }));
      expect(used.dirs.map((dir) => dir.split('/')[4])).toEqual(['memory', 'pids']);
      const run = await runPrefix(used.argv, spec, JSON.stringify({ ops: [{ op: 'session' }] }));
      expect(run.exitCode).toBe(0);
      const [memoryDir = '', pidsDir = ''] = used.dirs;
      expect(readFileSync(join(pidsDir, 'pids.peak'), 'utf8').trim()).not.toBe('0');
      expect(Number(readFileSync(join(memoryDir, 'memory.max_usage_in_bytes'), 'utf8'))).toBeGreaterThan(0);
      sweepCgroups(probeCgroups(services.facts));
      for (const dir of used.dirs) expect(existsSync(dir)).toBe(false);
      // Built but not yet run: an unjoined cgroup is kept until it counts as abandoned.
      for (const dir of unused.dirs) expect(existsSync(dir)).toBe(true);
      for (const dir of unused.dirs) rmdirSync(dir);
    } finally {
      workspace.remove();
      expect(await waitForNoMarkedProcessesOrKill(marker)).toEqual([]);
    }
  });
});

describe('pids cgroups made ahead, in the thread pool (sandboxes started before their call)', () => {
  it('carry the process limit and are joined by the sandbox; one removed is gone', async () => {
    const { cgroups } = services;
    const marker = newMarker('sandbox');
    const workspace = makeTempDir('toolhost-sbx-cgroup-');
    try {
      const spec = probeSpec(marker, { roots: [{ path: workspace.path, access: 'read' }] });
      const sandbox = await resolveSandboxArgv(spec, { cwd: workspace.path, timeoutMs: 10_000, logger: createSilentLogger(), services });
      if (!sandbox.ok) throw new Error(sandbox.reason);
      const [memoryDir = '', dir = ''] = cgroupDirsOf([...sandbox.argv]).dirs;
      expect(cgroups.ownDirs).toEqual(expect.arrayContaining([memoryDir, dir]));
      expect(readFileSync(join(dir, 'pids.max'), 'utf8').trim()).toBe(String(DEFAULT_PROCESSES));
      expect(readFileSync(join(memoryDir, 'memory.limit_in_bytes'), 'utf8').trim()).toBe(String(spec.memoryMb * 1024 * 1024));
      expect(readFileSync(join(memoryDir, 'memory.memsw.limit_in_bytes'), 'utf8').trim()).toBe(String(spec.memoryMb * 1024 * 1024));
      const prefix = sandbox.argv.slice(0, sandbox.argv.length - (spec.command?.length ?? 0));
      const run = await runPrefix(prefix, spec, JSON.stringify({ ops: [{ op: 'fork', count: 100 }] }));
      expect(run.exitCode, run.stderr).toBe(0);
      const [result] = JSON.parse(run.stdout) as [{ ok: { forked: number; error: string | null } }];
      expect(result.ok.error).toBe('EAGAIN');
      expect(result.ok.forked).toBeLessThan(DEFAULT_PROCESSES);
      const spare = await cgroups.createAsync({ processes: 3 });
      const [spareDir] = spare?.parts.map((part) => part.dir) ?? [];
      if (spare === undefined || spareDir === undefined) throw new Error('no pids cgroup');
      // No memory asked for: a pids cgroup alone.
      expect(spare.parts.map((part) => part.controllers)).toEqual([['pids']]);
      expect(readFileSync(join(spareDir, 'pids.max'), 'utf8').trim()).toBe('3');
      await cgroups.remove(spare);
      expect(existsSync(spareDir)).toBe(false);
    } finally {
      workspace.remove();
      expect(await waitForNoMarkedProcessesOrKill(marker)).toEqual([]);
    }
  });
});

function cgroupDirsOf(argv: string[]): { argv: string[]; dirs: string[] } {
  const procsPaths = argv.filter((arg) => arg.startsWith('/sys/') && arg.endsWith('/cgroup.procs'));
  if (procsPaths.length === 0) throw new Error('the argv binds no cgroup');
  return { argv, dirs: procsPaths.map((path) => path.slice(0, -'/cgroup.procs'.length)) };
}

// A cgroup made ahead, as a runner makes it, so the test can read it after the sandbox ended.
async function createCgroup(memoryMb: number): Promise<SandboxCgroup> {
  const cgroup = await services.cgroups.createAsync({ processes: DEFAULT_PROCESSES, memoryBytes: memoryMb * 1024 * 1024 });
  if (cgroup === undefined) throw new Error('no cgroup controller here');
  return cgroup;
}

function readMemoryLimit(cgroup: SandboxCgroup): number {
  const part = cgroup.parts.find((candidate) => candidate.controllers.includes('memory'));
  return Number(readFileSync(join(part?.dir ?? '', 'memory.limit_in_bytes'), 'utf8'));
}

// The services of a host whose machine has no usable memory controller (pids still by cgroup).
function withoutMemoryController(): { facts: SandboxFacts; cgroups: SandboxCgroups } {
  const facts = new SandboxFacts();
  const real = probeCgroups(services.facts);
  return { facts, cgroups: new SandboxCgroups(facts, undefined, { pids: real.pids, memory: { ok: false, reason: 'no memory controller (test)' } }) };
}
