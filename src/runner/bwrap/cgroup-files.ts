// The files of a sandbox's cgroup, by cgroup version (the kernel's
// Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/memory.rst and
// cgroup-v1/pids.rst): which limits are written where, where an OOM kill is
// counted, and what says a finished cgroup may go. Pure: the manager
// (sandbox-cgroups.ts) reads and writes, synchronously or in the thread pool.
//
//   pids, v1 and v2:  pids.max; pids.current, pids.peak
//   memory, v2:       memory.max, memory.swap.max = 0, memory.oom.group = 1;
//                     memory.events `oom_kill N`; memory.peak
//   memory, v1:       memory.limit_in_bytes, memory.memsw.limit_in_bytes (memory
//                     and swap together: no swap beyond the limit);
//                     memory.oom_control `oom_kill N` (Linux 4.13+);
//                     memory.max_usage_in_bytes
import { join } from 'node:path';
import type { CgroupController } from './cgroup-mounts.js';

/** One directory of a sandbox's cgroup: v2 has one for every controller, v1 one per hierarchy. */
export interface CgroupPart {
  readonly dir: string;
  readonly version: 1 | 2;
  readonly controllers: readonly CgroupController[];
}

/** What a sandbox's cgroup holds it to. */
export interface CgroupLimits {
  /** pids.max: processes and threads. */
  readonly processes: number;
  /** The memory limit in bytes (memoryMb); absent: no memory limit is written. */
  readonly memoryBytes?: number;
}

/** One limit to write; an optional one may be missing (no swap accounting, an older kernel). */
interface LimitFile {
  readonly path: string;
  readonly value: string;
  readonly isOptional: boolean;
}

/** The limit files of `part`, in the order they must be written. */
export function limitFilesOf(part: CgroupPart, limits: CgroupLimits): LimitFile[] {
  const files: LimitFile[] = [];
  const at = (name: string, value: number | string, isOptional = false) => files.push({ path: join(part.dir, name), value: String(value), isOptional });
  if (part.controllers.includes('pids')) at('pids.max', limits.processes);
  if (part.controllers.includes('memory') && limits.memoryBytes !== undefined) {
    if (part.version === 2) {
      at('memory.max', limits.memoryBytes);
      // No swap: the limit is what the sandbox may hold, not what it may push out to disk.
      at('memory.swap.max', 0, true);
      // An OOM kill takes the whole sandbox: one missing process leaves a tool half alive.
      at('memory.oom.group', 1, true);
    } else {
      // memsw must stay at or above the memory limit: the memory limit first.
      at('memory.limit_in_bytes', limits.memoryBytes);
      at('memory.memsw.limit_in_bytes', limits.memoryBytes, true);
    }
  }
  return files;
}

/** The file that counts OOM kills in the memory part of a cgroup, and how to read it. */
export function oomKillFileOf(part: CgroupPart): string | undefined {
  if (!part.controllers.includes('memory')) return undefined;
  return join(part.dir, part.version === 2 ? 'memory.events' : 'memory.oom_control');
}

/** OOM kills in `text` (memory.events or memory.oom_control): the `oom_kill N` line; undefined when it has none. */
export function parseOomKills(text: string): number | undefined {
  const match = /^oom_kill (\d+)$/m.exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** The files that say whether a cgroup of `part`'s kind is in use, and whether it ever was. */
export function stateFilesOf(part: Pick<CgroupPart, 'version' | 'controllers'>): { readonly current: string; readonly used: readonly string[] } {
  const hasPids = part.controllers.includes('pids');
  const used: string[] = [];
  if (hasPids) used.push('pids.peak');
  if (part.controllers.includes('memory')) used.push(part.version === 2 ? 'memory.peak' : 'memory.max_usage_in_bytes');
  // pids.current counts a task until it is reaped; cgroup.procs alone for a memory-only hierarchy.
  return { current: hasPids ? 'pids.current' : 'cgroup.procs', used };
}

/** What the state files said: tasks now, and whether any peak is above zero. */
export interface CgroupState {
  /** Tasks in it now; undefined when unreadable (gone). */
  readonly current: number | undefined;
  readonly wasUsed: boolean;
}

/** Reads a state from the texts of stateFilesOf's files (undefined for one that could not be read). */
export function parseCgroupState(currentFile: string, currentText: string | undefined, usedTexts: readonly (string | undefined)[]): CgroupState {
  let current: number | undefined;
  if (currentText !== undefined) current = currentFile === 'cgroup.procs' ? currentText.split('\n').filter((line) => line.trim() !== '').length : parseCount(currentText);
  return { current, wasUsed: usedTexts.some((text) => (parseCount(text ?? '') ?? 0) > 0) };
}

// A count, or `max` (no limit) read as undefined.
function parseCount(text: string): number | undefined {
  const value = Number.parseInt(text.trim(), 10);
  return Number.isFinite(value) ? value : undefined;
}
