// A pids cgroup per sandboxed process: the process-count limit that holds even
// for root. RLIMIT_NPROC is never enforced for uid 0 (the kernel exempts the
// root user, also inside a user namespace bubblewrap maps to host root), so a
// host running as root needs `pids.max`. The sandbox joins its cgroup itself,
// before the tool starts (see sandbox-argv.ts); this module creates the cgroup
// synchronously and removes empty ones, since nothing else does: its own off
// the event loop, other hosts' leftovers once at first use and at exit.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SandboxFacts } from './sandbox-facts.js';

export interface PidsCgroup {
  /** The cgroup's directory on the host. */
  readonly dir: string;
  /** Its `cgroup.procs`: writing `0` there moves the writer into the cgroup. */
  readonly procsPath: string;
  readonly version: 1 | 2;
}

export type PidsCgroupSupport =
  | { readonly ok: true; readonly baseDir: string; readonly version: 1 | 2 }
  | { readonly ok: false; readonly reason: string };

/** Whether this host can give each sandbox a pids cgroup (learned once per host; creates `<pids mount>/toolhost`). */
export function probePidsCgroup(facts: SandboxFacts): PidsCgroupSupport {
  return facts.remember('pids-cgroup', findPidsCgroupBase);
}

/** The pids cgroups one host made and has not removed yet; the host builds one (process-services.ts). */
export class PidsCgroups {
  private readonly own = new Set<string>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private exitSweep: (() => void) | undefined;
  // Unique across hosts in one process as well as across processes.
  private readonly tag = randomBytes(3).toString('hex');
  private sequence = 0;

  /** `sweepIntervalMs`: how often this host's finished cgroups are looked for (default SWEEP_INTERVAL_MS). */
  constructor(
    private readonly facts: SandboxFacts,
    private readonly sweepIntervalMs?: number,
  ) {}

  /** A fresh pids cgroup allowing `maxProcesses` tasks, or undefined when the host has no usable pids controller. */
  create(maxProcesses: number): PidsCgroup | undefined {
    const support = probePidsCgroup(this.facts);
    if (!support.ok) return undefined;
    const dir = this.nextDir(support);
    mkdirSync(dir);
    writeFileSync(join(dir, 'pids.max'), String(maxProcesses));
    this.own.add(dir);
    this.sweepOwnSoon();
    return { dir, procsPath: join(dir, 'cgroup.procs'), version: support.version };
  }

  /**
   * As create(), in the thread pool. For sandboxes started ahead of their call:
   * a cgroup mkdir waits for the kernel's cgroup lock, which another sandbox's
   * join holds across an RCU grace period (p90 19 ms on this machine under
   * load), and the host's event loop must not wait with it.
   */
  async createAsync(maxProcesses: number): Promise<PidsCgroup | undefined> {
    const support = probePidsCgroup(this.facts);
    if (!support.ok) return undefined;
    const dir = this.nextDir(support);
    await mkdir(dir);
    // Known before its limit is written: if that fails, the sweep still removes it.
    this.own.add(dir);
    this.sweepOwnSoon();
    await writeFile(join(dir, 'pids.max'), String(maxProcesses));
    return { dir, procsPath: join(dir, 'cgroup.procs'), version: support.version };
  }

  /**
   * Removes a cgroup whose sandbox has ended (or will never start) now, rather
   * than by the sweep, which reads two files of each cgroup first. Still busy
   * (a straggler of the sandbox exiting): left to the sweep.
   */
  async remove(cgroup: PidsCgroup): Promise<void> {
    // A task closes its files (the host's end-of-output) a moment before it leaves its cgroup.
    for (const delayMs of [0, 10, 50]) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        await rmdir(cgroup.dir);
        this.own.delete(cgroup.dir);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') this.own.delete(cgroup.dir);
        if (code !== 'EBUSY') return;
      }
    }
  }

  // A unique name; the first one also clears what earlier hosts left, once (from then on only our own).
  private nextDir(support: { readonly baseDir: string; readonly version: 1 | 2; readonly ok: true }): string {
    if (this.exitSweep === undefined) {
      // Sandboxes die with the host (--die-with-parent), so at exit our cgroups are
      // empty or about to be; whatever is still busy is left to the next sweep.
      this.exitSweep = () => void sweepPidsCgroups(support, { hostExiting: true });
      process.once('exit', this.exitSweep);
      sweepPidsCgroups(support);
    }
    return join(support.baseDir, `${process.pid}-${Date.now().toString(36)}-${this.tag}${(this.sequence += 1)}`);
  }

  /** Directories of this host's cgroups not removed yet (tests, diagnostics). */
  get ownDirs(): readonly string[] {
    return [...this.own];
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
    for (const dir of [...this.own]) {
      if (!(await isOwnRemovable(dir, hostClosing))) continue;
      try {
        await rmdir(dir);
        this.own.delete(dir);
      } catch (error) {
        // EBUSY: a process joined meanwhile; ENOENT: swept already.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') this.own.delete(dir);
      }
    }
  }
}

/**
 * Removes empty toolhost cgroups that are finished, abandoned, or whose host is gone. Returns how many.
 * `hostExiting`: this host will start no more sandboxes, so its own unjoined cgroups go too.
 */
export function sweepPidsCgroups(support: PidsCgroupSupport, options: { readonly hostExiting?: boolean } = {}): number {
  if (!support.ok) return 0;
  let removed = 0;
  for (const name of safeReaddir(support.baseDir)) {
    const dir = join(support.baseDir, name);
    if (isRemovable(dir, name, options.hostExiting === true)) {
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
function isFinished(current: number | undefined, peak: number | undefined, ageMs: number): boolean {
  return current === 0 && ((peak !== undefined && peak > 0) || ageMs > ABANDONED_AFTER_MS);
}

function isRemovable(dir: string, name: string, hostExiting: boolean): boolean {
  const current = readNumber(join(dir, 'pids.current'));
  if (current !== 0) return false;
  let ageMs = 0;
  try {
    ageMs = Date.now() - statSync(dir).mtimeMs;
  } catch {
    // gone meanwhile: rmdir will say so
  }
  if (isFinished(current, readNumber(join(dir, 'pids.peak')), ageMs)) return true;
  // Empty and unused: removable only when its host is gone (or is this one, exiting).
  const ownerPid = Number.parseInt(name.split('-')[0] ?? '', 10);
  if (hostExiting && ownerPid === process.pid) return true;
  return Number.isInteger(ownerPid) && ownerPid > 0 && ownerPid !== process.pid && !existsSync(`/proc/${ownerPid}`);
}

async function isOwnRemovable(dir: string, hostClosing: boolean): Promise<boolean> {
  const read = (name: string) => readFile(join(dir, name), 'utf8').then(parseCount, () => undefined);
  const [current, peak, ageMs] = await Promise.all([read('pids.current'), read('pids.peak'), stat(dir).then((found) => Date.now() - found.mtimeMs, () => 0)]);
  // Gone already: rmdir answers ENOENT and the cgroup is forgotten. A closing host starts no
  // more sandboxes, so its empty cgroups go whether or not they were ever joined.
  return current === undefined || isFinished(current, peak, ageMs) || (hostClosing && current === 0);
}

function findPidsCgroupBase(): PidsCgroupSupport {
  let mountinfo: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return { ok: false, reason: 'cannot read /proc/self/mountinfo' };
  }
  const mounts = mountinfo.split('\n').map(parseMountinfoLine).filter((mount) => mount !== undefined);
  const v1 = mounts.find((mount) => mount.fsType === 'cgroup' && mount.superOptions.split(',').includes('pids'));
  if (v1 !== undefined) return prepareBase(v1.mountPoint, 1);
  const v2 = mounts.find((mount) => mount.fsType === 'cgroup2' && readText(join(mount.mountPoint, 'cgroup.controllers')).split(/\s+/).includes('pids'));
  if (v2 !== undefined) return prepareBase(v2.mountPoint, 2);
  return { ok: false, reason: 'no pids cgroup controller is mounted' };
}

function prepareBase(mountPoint: string, version: 1 | 2): PidsCgroupSupport {
  const baseDir = join(mountPoint, 'toolhost');
  try {
    // cgroup v2 only gives children a pids.max when the parent delegates the controller.
    if (version === 2) writeFileSync(join(mountPoint, 'cgroup.subtree_control'), '+pids');
    mkdirSync(baseDir, { recursive: true });
    if (version === 2) writeFileSync(join(baseDir, 'cgroup.subtree_control'), '+pids');
    // Prove a child with a limit can be made and removed here.
    const probeDir = join(baseDir, `${process.pid}-probe-${Date.now().toString(36)}`);
    mkdirSync(probeDir);
    try {
      writeFileSync(join(probeDir, 'pids.max'), '1');
    } finally {
      rmdirSync(probeDir);
    }
    return { ok: true, baseDir, version };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return { ok: false, reason: `the pids cgroup at ${mountPoint} is not writable (${code}): run as root or delegate a cgroup` };
  }
}

interface MountInfo {
  readonly mountPoint: string;
  readonly fsType: string;
  readonly superOptions: string;
}

// mountinfo: "id parent maj:min root mountpoint options [optional...] - fstype source superoptions"
function parseMountinfoLine(line: string): MountInfo | undefined {
  const separator = line.indexOf(' - ');
  if (separator < 0) return undefined;
  const before = line.slice(0, separator).split(' ');
  const after = line.slice(separator + 3).split(' ');
  const mountPoint = before[4];
  const fsType = after[0];
  if (mountPoint === undefined || fsType === undefined) return undefined;
  return { mountPoint: unescapeMountinfo(mountPoint), fsType, superOptions: after[2] ?? '' };
}

function unescapeMountinfo(value: string): string {
  return value.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

function readNumber(path: string): number | undefined {
  return parseCount(readText(path));
}

// A pids.* file: a count, or `max` (no limit) read as undefined.
function parseCount(text: string): number | undefined {
  const value = Number.parseInt(text.trim(), 10);
  return Number.isFinite(value) ? value : undefined;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
