// Which host processes are still alive. A journal record in `started` belongs
// to a host; when that host is gone the call's effect is unknown and the record
// becomes `interrupted`. A pid alone is not enough (pids are reused), so a host
// is identified by machine, boot and the kernel's start time of its process.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** What identifies one running host process across the machine's lifetime. */
export interface HostIdentity {
  readonly pid: number;
  readonly machine: string;
  /** /proc/sys/kernel/random/boot_id; null where /proc is absent. */
  readonly bootId: string | null;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot); null where /proc is absent. */
  readonly processStart: string | null;
}

/** The identity of the current process. */
export function currentHostIdentity(): HostIdentity {
  return {
    pid: process.pid,
    machine: hostname(),
    bootId: readBootId(),
    processStart: readProcessStart(process.pid),
  };
}

/**
 * 'alive', 'dead' or 'unknown' (another machine sharing the folder: we cannot
 * look at its processes, so its calls are left alone).
 */
export function hostLiveness(host: HostIdentity, here: HostIdentity = currentHostIdentity()): 'alive' | 'dead' | 'unknown' {
  if (host.machine !== here.machine) return 'unknown';
  if (host.bootId !== null && here.bootId !== null && host.bootId !== here.bootId) return 'dead';
  if (host.processStart !== null) {
    const start = readProcessStart(host.pid);
    // A missing /proc entry means the pid is gone; a different start time means it was reused.
    if (start !== null) return start === host.processStart ? 'alive' : 'dead';
    if (here.processStart !== null) return 'dead';
  }
  return isPidAlive(host.pid) ? 'alive' : 'dead';
}

/** Field 22 (starttime) of /proc/<pid>/stat, or null when the process or /proc is absent. */
export function readProcessStart(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so starttime (field 22) is fields[19].
  const start = fields[19];
  // A zombie still has its stat entry but will never finish its call.
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  return start ?? null;
}

function readBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
