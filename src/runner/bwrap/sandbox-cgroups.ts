// A cgroup per sandboxed process, holding it to its process count and its
// memory. The process count needs a pids cgroup: RLIMIT_NPROC is never
// enforced for uid 0 (the kernel exempts root, also inside a user namespace
// bubblewrap maps to host root). The memory needs the memory controller: an
// address-space limit (RLIMIT_AS) counts what a runtime reserves, not what it
// uses, and a JIT, WebAssembly or a browser reserves gigabytes it never
// touches (Node's fetch, undici's llhttp, is WebAssembly). With cgroup v2 one
// directory holds both; with v1 each controller has its own hierarchy and the
// sandbox joins a directory in each. The sandbox joins them itself, before the
// tool starts (argv.ts); this module creates them, reads their OOM kills, and
// removes empty ones, since nothing else does: its own off the event loop,
// other hosts' leftovers once at first use and at exit.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { limitFilesOf, oomKillFileOf, parseCgroupState, parseOomKills, stateFilesOf, type CgroupLimits, type CgroupPart, type CgroupState } from './cgroup-files.js';
import { findControllerMount, type CgroupController, type ControllerMount } from './cgroup-mounts.js';
import type { SandboxFacts } from './sandbox-facts.js';

export type { CgroupLimits, CgroupPart } from './cgroup-files.js';

/** The cgroup of one sandbox. */
export interface SandboxCgroup {
  /** Its directories, the memory controller's first: one with cgroup v2, one per hierarchy with v1. */
  readonly parts: readonly CgroupPart[];
  /** Each part's `cgroup.procs`, in the same order: writing `0` there moves the writer into it. */
  readonly procsPaths: readonly string[];
  /** The memory limit the kernel holds the sandbox to, in bytes; undefined when no memory controller is used (RLIMIT_AS then). */
  readonly memoryBytes: number | undefined;
  /** A part is on cgroup v2: the sandbox must keep the host's cgroup namespace (v2 refuses a move across one). */
  readonly hasV2: boolean;
}

/** Whether one controller can hold sandboxes on this host, and where its sandbox cgroups are made. */
type ControllerSupport = { readonly ok: true; readonly version: 1 | 2; readonly baseDir: string } | { readonly ok: false; readonly reason: string };

export interface CgroupSupport {
  readonly pids: ControllerSupport;
  readonly memory: ControllerSupport;
}

/** How a sandbox's memoryMb is held on this host (doctor, list, explain). */
export interface MemoryHold {
  /** `cgroup`: the kernel's memory controller counts what the sandbox uses; `address_space`: the RLIMIT_AS fallback. */
  readonly heldBy: 'cgroup' | 'address_space';
  readonly cgroupVersion: 1 | 2 | null;
  /** Why the fallback applies; null with a cgroup. */
  readonly reason: string | null;
}

/** The memory hold that `support` gives every sandbox of the host. */
export function memoryHoldOf(support: CgroupSupport): MemoryHold {
  if (support.memory.ok) return { heldBy: 'cgroup', cgroupVersion: support.memory.version, reason: null };
  return { heldBy: 'address_space', cgroupVersion: null, reason: support.memory.reason };
}

/** Whether this host can give each sandbox a pids and a memory cgroup (learned once per host; creates `<mount>/toolhost`). */
export function probeCgroups(facts: SandboxFacts): CgroupSupport {
  return facts.remember('cgroups', () => findCgroupSupport());
}

/** What the controllers of this machine (or of `mountinfo`'s text) support, preparing each base folder. */
function findCgroupSupport(mountinfo?: string): CgroupSupport {
  const supportOf = (controller: CgroupController): ControllerSupport => {
    const found = findControllerMount(controller, mountinfo);
    if (!found.ok) return found;
    try {
      const baseDir = enableControllerBase(found.mount);
      proveSandboxCgroup(baseDir, found.mount);
      return { ok: true, version: found.mount.version, baseDir };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      return { ok: false, reason: `the ${controller} cgroup at ${found.mount.mountPoint} is not writable (${code}): run as root or delegate a cgroup` };
    }
  };
  return { pids: supportOf('pids'), memory: supportOf('memory') };
}

/**
 * Makes `<mount>/toolhost`, where sandbox cgroups go, and returns it. On cgroup v2 a
 * child gets a controller's files only when its parent delegates the controller
 * (`+pids` in `cgroup.subtree_control`), so the mount's root and the base delegate it.
 */
export function enableControllerBase(mount: ControllerMount): string {
  const baseDir = join(mount.mountPoint, 'toolhost');
  if (mount.version === 2) writeFileSync(join(mount.mountPoint, 'cgroup.subtree_control'), `+${mount.controller}`);
  mkdirSync(baseDir, { recursive: true });
  if (mount.version === 2) writeFileSync(join(baseDir, 'cgroup.subtree_control'), `+${mount.controller}`);
  return baseDir;
}

// Proves a child with a limit can be made and removed there (throws otherwise).
function proveSandboxCgroup(baseDir: string, mount: ControllerMount): void {
  const dir = join(baseDir, `${process.pid}-probe-${Date.now().toString(36)}`);
  mkdirSync(dir);
  try {
    for (const file of limitFilesOf({ dir, version: mount.version, controllers: [mount.controller] }, { processes: 1, memoryBytes: PROBE_MEMORY_BYTES })) {
      if (!file.isOptional) writeFileSync(file.path, file.value);
    }
  } finally {
    rmdirSync(dir);
  }
}

const PROBE_MEMORY_BYTES = 64 * 1024 * 1024;

/** The cgroups one host made and has not removed yet; the host builds one (process-services.ts). */
export class SandboxCgroups {
  private readonly own = new Map<string, CgroupPart>();
  /** Own directories whose sandbox's owner removes them itself (remove()), by when they were made: the periodic sweep leaves them alone. */
  private readonly removedByOwner = new Map<string, number>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private exitSweep: (() => void) | undefined;
  // Unique across hosts in one process as well as across processes.
  private readonly tag = randomBytes(3).toString('hex');
  private sequence = 0;

  /**
   * `sweepIntervalMs`: how often this host's finished cgroups are looked for (default SWEEP_INTERVAL_MS).
   * `support`: what the machine offers (a seam for tests with a fake cgroup root); default probed once.
   */
  constructor(
    private readonly facts: SandboxFacts,
    private readonly sweepIntervalMs?: number,
    private readonly givenSupport?: CgroupSupport,
  ) {}

  /** What this host's sandboxes are held by. */
  get support(): CgroupSupport {
    return this.givenSupport ?? probeCgroups(this.facts);
  }

  /** A fresh cgroup with these limits, or undefined when the host has no usable controller. */
  create(limits: CgroupLimits): SandboxCgroup | undefined {
    const planned = this.plan(limits);
    if (planned === undefined) return undefined;
    for (const part of planned.parts) {
      mkdirSync(part.dir);
      this.own.set(part.dir, part);
    }
    this.sweepOwnSoon();
    for (const part of planned.parts) {
      for (const file of limitFilesOf(part, limits)) writeLimit(file, () => writeFileSync(file.path, file.value));
    }
    return planned;
  }

  /**
   * As create(), its mkdirs in the thread pool. For sandboxes started ahead of
   * their call: a cgroup mkdir waits for the kernel's cgroup lock, which another
   * sandbox's join holds across an RCU grace period (p90 19 ms on this machine
   * under load), and the host's event loop must not wait with it. The limits are
   * written here, synchronously: writing a controller's file takes no cgroup
   * lock, and a fresh cgroup holds nothing to reclaim, while each write through
   * the thread pool was three round trips there (open, write, close).
   */
  async createAsync(limits: CgroupLimits, options: { readonly ownerRemoves?: boolean } = {}): Promise<SandboxCgroup | undefined> {
    const planned = this.plan(limits);
    if (planned === undefined) return undefined;
    for (const part of planned.parts) {
      await mkdir(part.dir);
      // Known before its limits are written: if that fails, the sweep still removes it.
      this.own.set(part.dir, part);
      if (options.ownerRemoves === true) this.removedByOwner.set(part.dir, Date.now());
    }
    this.sweepOwnSoon();
    for (const part of planned.parts) {
      for (const file of limitFilesOf(part, limits)) writeLimit(file, () => writeFileSync(file.path, file.value));
    }
    return planned;
  }

  /** OOM kills the kernel counted in the sandbox's memory cgroup (0 without one). */
  async oomKills(cgroup: SandboxCgroup | undefined): Promise<number> {
    const part = cgroup?.parts.find((candidate) => candidate.controllers.includes('memory'));
    const file = part === undefined ? undefined : oomKillFileOf(part);
    if (file === undefined || cgroup?.memoryBytes === undefined) return 0;
    const text = await readFile(file, 'utf8').catch(() => '');
    const kills = parseOomKills(text);
    if (kills !== undefined) return kills;
    // A v1 kernel older than 4.13 counts no kills: the limit hit (failcnt) is the best witness.
    const failures = await readFile(join(part?.dir ?? '', 'memory.failcnt'), 'utf8').catch(() => '0');
    return Number.parseInt(failures, 10) > 0 ? 1 : 0;
  }

  /**
   * Removes a cgroup whose sandbox has ended (or will never start) now, rather
   * than by the sweep, which reads two files of each cgroup first. Still busy
   * (a straggler of the sandbox exiting): left to the sweep.
   */
  async remove(cgroup: SandboxCgroup): Promise<void> {
    await Promise.all(cgroup.parts.map((part) => this.removeDir(part.dir)));
  }

  private async removeDir(dir: string): Promise<void> {
    // Still busy after the retries below: the sweep's from now on.
    this.removedByOwner.delete(dir);
    // A task closes its files (the host's end-of-output) a moment before it leaves its cgroup.
    for (const delayMs of [0, 10, 50]) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        await rmdir(dir);
        this.own.delete(dir);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') this.own.delete(dir);
        if (code !== 'EBUSY') return;
      }
    }
  }

  private forget(dir: string): void {
    this.own.delete(dir);
    this.removedByOwner.delete(dir);
  }

  /** Directories of this host's cgroups not removed yet (tests, diagnostics). */
  get ownDirs(): readonly string[] {
    return [...this.own.keys()];
  }

  /**
   * Removes this host's cgroups and stops the timer (host close, after its runners
   * closed). A sandbox just killed may still be counted in its cgroup for a moment
   * (the processes of its pid namespace are still exiting): retried briefly, so a
   * closed host leaves none behind; one still busy after that is left to the next sweep.
   */
  async close(): Promise<void> {
    clearTimeout(this.sweepTimer);
    this.sweepTimer = undefined;
    const deadline = performance.now() + CLOSE_SWEEP_MS;
    await this.sweepOwn(true);
    while (this.own.size > 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, CLOSE_RETRY_MS));
      await this.sweepOwn(true);
    }
    if (this.exitSweep !== undefined) process.off('exit', this.exitSweep);
    this.exitSweep = undefined;
  }

  // The directories a new cgroup gets (one per hierarchy), named alike; undefined without any controller.
  private plan(limits: CgroupLimits): SandboxCgroup | undefined {
    const support = this.support;
    const memory = limits.memoryBytes !== undefined && support.memory.ok ? support.memory : undefined;
    const pids = support.pids.ok ? support.pids : undefined;
    if (memory === undefined && pids === undefined) return undefined;
    const name = this.nextName(support);
    const parts: CgroupPart[] = [];
    if (memory !== undefined) parts.push({ dir: join(memory.baseDir, name), version: memory.version, controllers: ['memory'] });
    if (pids !== undefined) {
      const shared = parts.find((part) => part.dir === join(pids.baseDir, name));
      if (shared !== undefined) parts[0] = { ...shared, controllers: ['memory', 'pids'] };
      else parts.push({ dir: join(pids.baseDir, name), version: pids.version, controllers: ['pids'] });
    }
    return {
      parts,
      procsPaths: parts.map((part) => join(part.dir, 'cgroup.procs')),
      memoryBytes: memory === undefined ? undefined : limits.memoryBytes,
      hasV2: parts.some((part) => part.version === 2),
    };
  }

  // A unique name; the first one also clears what earlier hosts left, once (from then on only our own).
  private nextName(support: CgroupSupport): string {
    if (this.exitSweep === undefined) {
      // Sandboxes die with the host (--die-with-parent), so at exit our cgroups are
      // empty or about to be; whatever is still busy is left to the next sweep.
      this.exitSweep = () => void sweepCgroups(support, { hostExiting: true });
      process.once('exit', this.exitSweep);
      sweepCgroups(support);
    }
    return `${process.pid}-${Date.now().toString(36)}-${this.tag}${(this.sequence += 1)}`;
  }

  // This host's cgroups are removed off the event loop, a second after the last
  // was made and again while any remain: a synchronous pass over every cgroup
  // stalled the host for milliseconds each second under a stream of one-shot calls.
  private sweepOwnSoon(): void {
    if (this.sweepTimer !== undefined) return;
    this.sweepTimer = setTimeout(() => {
      void this.sweepOwn(false).finally(() => {
        this.sweepTimer = undefined;
        if (this.own.size > 0 && this.exitSweep !== undefined) this.sweepOwnSoon();
      });
    }, this.sweepIntervalMs ?? SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  private async sweepOwn(hostClosing: boolean): Promise<void> {
    for (const [dir, part] of [...this.own]) {
      // Its owner removes it once its sandbox has ended (read two files a second for every
      // prepared sandbox otherwise); one left longer than an abandoned cgroup is swept all the same.
      const madeAt = this.removedByOwner.get(dir);
      if (!hostClosing && madeAt !== undefined && Date.now() - madeAt <= ABANDONED_AFTER_MS) continue;
      if (!(await isOwnRemovable(dir, part, hostClosing))) continue;
      try {
        await rmdir(dir);
        this.forget(dir);
      } catch (error) {
        // EBUSY: a process joined meanwhile; ENOENT: swept already.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') this.forget(dir);
      }
    }
  }
}

/**
 * Removes empty toolhost cgroups that are finished, abandoned, or whose host is gone, in every
 * hierarchy the host uses. Returns how many. `hostExiting`: this host will start no more
 * sandboxes, so its own unjoined cgroups go too.
 */
export function sweepCgroups(support: CgroupSupport, options: { readonly hostExiting?: boolean } = {}): number {
  let removed = 0;
  for (const base of basesOf(support)) {
    for (const name of safeReaddir(base.baseDir)) {
      const dir = join(base.baseDir, name);
      if (!isRemovable(dir, name, base, options.hostExiting === true)) continue;
      try {
        rmdirSync(dir);
        removed += 1;
      } catch {
        // EBUSY: a process joined meanwhile; ENOENT: another host swept it.
      }
    }
  }
  return removed;
}

// A cgroup created but not yet joined is empty too: only an owner that is gone,
// a peak above zero (it was used and is now empty) or old age marks it finished.
const ABANDONED_AFTER_MS = 60_000;
const SWEEP_INTERVAL_MS = 1000;
/** How long a closing host waits for its last cgroups to empty, and how often it looks. */
const CLOSE_SWEEP_MS = 2000;
const CLOSE_RETRY_MS = 20;

/** Empty, and either used (a peak above zero) or left unjoined too long: finished. */
function isFinished(state: CgroupState, ageMs: number): boolean {
  return state.current === 0 && (state.wasUsed || ageMs > ABANDONED_AFTER_MS);
}

// Each hierarchy's base once, with the controllers its cgroups have (v2: both in one).
function basesOf(support: CgroupSupport): Array<Pick<CgroupPart, 'version' | 'controllers'> & { readonly baseDir: string }> {
  const bases = new Map<string, { baseDir: string; version: 1 | 2; controllers: CgroupController[] }>();
  for (const controller of ['memory', 'pids'] as const) {
    const found = support[controller];
    if (!found.ok) continue;
    const known = bases.get(found.baseDir);
    if (known !== undefined) known.controllers.push(controller);
    else bases.set(found.baseDir, { baseDir: found.baseDir, version: found.version, controllers: [controller] });
  }
  return [...bases.values()];
}

function isRemovable(dir: string, name: string, kind: Pick<CgroupPart, 'version' | 'controllers'>, hostExiting: boolean): boolean {
  const files = stateFilesOf(kind);
  const state = parseCgroupState(
    files.current,
    readText(join(dir, files.current)),
    files.used.map((file) => readText(join(dir, file))),
  );
  if (state.current !== 0) return false;
  let ageMs = 0;
  try {
    ageMs = Date.now() - statSync(dir).mtimeMs;
  } catch {
    // gone meanwhile: rmdir will say so
  }
  if (isFinished(state, ageMs)) return true;
  // Empty and unused: removable only when its host is gone (or is this one, exiting).
  const ownerPid = Number.parseInt(name.split('-')[0] ?? '', 10);
  if (hostExiting && ownerPid === process.pid) return true;
  return Number.isInteger(ownerPid) && ownerPid > 0 && ownerPid !== process.pid && !existsSync(`/proc/${ownerPid}`);
}

async function isOwnRemovable(dir: string, part: CgroupPart, hostClosing: boolean): Promise<boolean> {
  const files = stateFilesOf(part);
  const read = (name: string) => readFile(join(dir, name), 'utf8').catch(() => undefined);
  const [current, ageMs, ...used] = await Promise.all([
    read(files.current),
    stat(dir).then(
      (found) => Date.now() - found.mtimeMs,
      () => 0,
    ),
    ...files.used.map(read),
  ]);
  const state = parseCgroupState(files.current, current, used);
  // Gone already: rmdir answers ENOENT and the cgroup is forgotten. A closing host starts no
  // more sandboxes, so its empty cgroups go whether or not they were ever joined.
  return state.current === undefined || isFinished(state, ageMs) || (hostClosing && state.current === 0);
}

// A required limit that cannot be written throws (the sandbox must not run without it);
// an optional one may be missing (ENOENT: no swap accounting, an older kernel).
function writeLimit(file: { readonly isOptional: boolean }, write: () => void): void {
  try {
    write();
  } catch (error) {
    if (!file.isOptional || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The memory limit, in bytes, of the memory cgroup process `pid` is in (doctor); null when it has none. */
export function memoryLimitOfProcess(pid: number, support: CgroupSupport): number | null {
  if (!support.memory.ok) return null;
  const { version, baseDir } = support.memory;
  // /proc/PID/cgroup: "N:memory:/path" (v1) or "0::/path" (v2), relative to the hierarchy's root as mounted here.
  const line = (readText(`/proc/${pid}/cgroup`) ?? '').split('\n').find((entry) => (version === 2 ? entry.startsWith('0::') : entry.split(':')[1]?.split(',').includes('memory')));
  const path = line?.split(':').slice(2).join(':');
  if (path === undefined || path === '/') return null;
  const limit = Number.parseInt(readText(join(dirname(baseDir), path, version === 2 ? 'memory.max' : 'memory.limit_in_bytes')) ?? '', 10);
  return Number.isFinite(limit) ? limit : null;
}
