// The file layout of a sandbox's cgroup. cgroup v2 (what most machines have;
// these have v1, tested for real in test/integration/sandbox/rlimits.test.ts)
// on a fake cgroup root in a temporary folder: the controllers are delegated
// to the base folder, one directory holds pids.max, memory.max, no swap and a
// group OOM kill, the sandbox joins it without a cgroup namespace of its own
// and gets no address-space cap, and its OOM kills are read from memory.events.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limitFilesOf, parseCgroupState, parseOomKills, stateFilesOf } from '../../../../src/runner/bwrap/cgroup-files.js';
import { findControllerMount } from '../../../../src/runner/bwrap/cgroup-mounts.js';
import { buildSandboxArgv } from '../../../../src/runner/bwrap/argv.js';
import { enableControllerBase, memoryHoldOf, SandboxCgroups, type CgroupSupport } from '../../../../src/runner/bwrap/sandbox-cgroups.js';
import { SandboxFacts } from '../../../../src/runner/bwrap/sandbox-facts.js';
import { runSpec } from '../../../helpers/run-spec.js';

const MiB = 1024 * 1024;

describe('cgroup v2, on a fake cgroup root', () => {
  let root = '';
  let mountinfo = '';
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'toolhost-fake-cgroup2-'));
    writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
    writeFileSync(join(root, 'cgroup.subtree_control'), '');
    // A unified hierarchy only: no v1 controller is mounted.
    mountinfo = [
      '22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw',
      `30 23 0:26 / ${root} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot`,
    ].join('\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('finds both controllers on the unified hierarchy and delegates them to <root>/toolhost', () => {
    const memory = findControllerMount('memory', mountinfo);
    const pids = findControllerMount('pids', mountinfo);
    expect(memory).toEqual({ ok: true, mount: { controller: 'memory', version: 2, mountPoint: root } });
    expect(pids).toEqual({ ok: true, mount: { controller: 'pids', version: 2, mountPoint: root } });
    if (!memory.ok) return;
    const base = enableControllerBase(memory.mount);
    expect(base).toBe(join(root, 'toolhost'));
    // A child gets memory.max only when its parent delegates the controller: the root and the base both do.
    expect(readFileSync(join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+memory');
    expect(readFileSync(join(base, 'cgroup.subtree_control'), 'utf8')).toBe('+memory');
    expect(findControllerMount('memory', '30 23 0:26 / /nowhere rw - cgroup2 cgroup2 rw')).toMatchObject({ ok: false });
  });

  it('makes one directory per sandbox with pids.max, memory.max, memory.swap.max 0 and memory.oom.group 1', async () => {
    const cgroups = fakeCgroups(root);
    const cgroup = await cgroups.createAsync({ processes: 32, memoryBytes: 64 * MiB });
    if (cgroup === undefined) throw new Error('no cgroup');
    expect(cgroup.parts).toHaveLength(1);
    const [part] = cgroup.parts;
    expect(part).toMatchObject({ version: 2, controllers: ['memory', 'pids'] });
    const read = (name: string) => readFileSync(join(part?.dir ?? '', name), 'utf8');
    expect({ pids: read('pids.max'), memory: read('memory.max'), swap: read('memory.swap.max'), oomGroup: read('memory.oom.group') }).toEqual({
      pids: '32',
      memory: String(64 * MiB),
      swap: '0',
      oomGroup: '1',
    });
    expect(cgroup).toMatchObject({ procsPaths: [join(part?.dir ?? '', 'cgroup.procs')], memoryBytes: 64 * MiB, hasV2: true });
    expect(cgroups.ownDirs).toEqual([part?.dir]);
    // The synchronous path writes the same files.
    const sync = cgroups.create({ processes: 8, memoryBytes: 16 * MiB });
    expect(readFileSync(join(sync?.parts[0]?.dir ?? '', 'memory.max'), 'utf8')).toBe(String(16 * MiB));
  });

  it('reads OOM kills from memory.events, and none before the kernel counted one', async () => {
    const cgroups = fakeCgroups(root);
    const cgroup = await cgroups.createAsync({ processes: 32, memoryBytes: 64 * MiB });
    const dir = cgroup?.parts[0]?.dir ?? '';
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n');
    expect(await cgroups.oomKills(cgroup)).toBe(0);
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 1\n');
    expect(await cgroups.oomKills(cgroup)).toBe(2);
  });

  it('gives the sandbox its one cgroup.procs, keeps the host cgroup namespace (v2 refuses a move across one) and sets no RLIMIT_AS', () => {
    const cgroups = fakeCgroups(root);
    const facts = new SandboxFacts();
    const workdir = mkdtempSync(join(tmpdir(), 'toolhost-fake-cgroup2-work-'));
    try {
      const spec = runSpec({ name: 'fake_v2', mode: 'process', isolation: 'namespace', command: ['/bin/true'], manifestDir: workdir, memoryMb: 96 });
      const argv = buildSandboxArgv(spec, { services: { facts, cgroups }, cwd: workdir });
      const end = argv.indexOf('--');
      const flags = argv.slice(0, end);
      const dir = cgroups.ownDirs[0] ?? '';
      expect(flags.join(' ')).toContain(`--bind ${join(dir, 'cgroup.procs')} /run/toolhost/cgroup.procs`);
      expect(flags.filter((flag) => flag.endsWith('.procs') && flag.startsWith('/run/'))).toEqual(['/run/toolhost/cgroup.procs']);
      expect(flags).not.toContain('--unshare-cgroup-try');
      const gate = argv.slice(end).join(' ');
      expect(gate).toContain('echo 0 > /run/toolhost/cgroup.procs && ');
      expect(gate).not.toMatch(/ulimit -v|--as=/);
      expect(readFileSync(join(dir, 'memory.max'), 'utf8')).toBe(String(96 * MiB));
    } finally {
      rmSync(workdir, { recursive: true, force: true });
    }
  });
});

describe('cgroup files', () => {
  it('v1 holds memory and swap together (memsw at the same limit, written after the memory limit)', () => {
    const files = limitFilesOf({ dir: '/m/toolhost/x', version: 1, controllers: ['memory'] }, { processes: 5, memoryBytes: 8 * MiB });
    expect(files).toEqual([
      { path: '/m/toolhost/x/memory.limit_in_bytes', value: String(8 * MiB), isOptional: false },
      { path: '/m/toolhost/x/memory.memsw.limit_in_bytes', value: String(8 * MiB), isOptional: true },
    ]);
    expect(limitFilesOf({ dir: '/p/toolhost/x', version: 1, controllers: ['pids'] }, { processes: 5, memoryBytes: 8 * MiB })).toEqual([
      { path: '/p/toolhost/x/pids.max', value: '5', isOptional: false },
    ]);
  });

  it('reads the oom_kill line of memory.events (v2) and memory.oom_control (v1)', () => {
    expect(parseOomKills('oom_kill_disable 0\nunder_oom 0\noom_kill 3\n')).toBe(3);
    expect(parseOomKills('oom_kill_disable 0\nunder_oom 0\n')).toBeUndefined();
  });

  it('says a cgroup is finished by its task count and peaks, per hierarchy', () => {
    expect(stateFilesOf({ version: 1, controllers: ['memory'] })).toEqual({ current: 'cgroup.procs', used: ['memory.max_usage_in_bytes'] });
    expect(stateFilesOf({ version: 2, controllers: ['memory', 'pids'] })).toEqual({ current: 'pids.current', used: ['pids.peak', 'memory.peak'] });
    expect(parseCgroupState('cgroup.procs', '', ['4096\n'])).toEqual({ current: 0, wasUsed: true });
    expect(parseCgroupState('cgroup.procs', '12\n13\n', ['4096\n'])).toEqual({ current: 2, wasUsed: true });
    expect(parseCgroupState('pids.current', '0\n', ['0\n', undefined])).toEqual({ current: 0, wasUsed: false });
    expect(parseCgroupState('pids.current', undefined, [])).toEqual({ current: undefined, wasUsed: false });
  });

  it('names the fallback and why when no memory controller can be used', () => {
    const support: CgroupSupport = { pids: { ok: true, version: 1, baseDir: '/p/toolhost' }, memory: { ok: false, reason: 'no memory cgroup controller is mounted' } };
    expect(memoryHoldOf(support)).toEqual({ heldBy: 'address_space', cgroupVersion: null, reason: 'no memory cgroup controller is mounted' });
    expect(memoryHoldOf({ ...support, memory: { ok: true, version: 2, baseDir: '/c/toolhost' } })).toEqual({ heldBy: 'cgroup', cgroupVersion: 2, reason: null });
  });
});

// The manager of a host whose machine is the fake unified hierarchy at `root`.
function fakeCgroups(root: string): SandboxCgroups {
  const baseDir = join(root, 'toolhost');
  mkdirSync(baseDir, { recursive: true });
  const support: CgroupSupport = { pids: { ok: true, version: 2, baseDir }, memory: { ok: true, version: 2, baseDir } };
  return new SandboxCgroups(new SandboxFacts(), 60_000, support);
}
