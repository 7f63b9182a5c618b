// Finds processes that carry a test's marker in their argv or environment, by
// reading /proc. Tests tag every process they start with a unique marker and
// use this to prove that none is left behind.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { pollUntil } from './wait.js';

export { pollUntil } from './wait.js';

/** A unique marker for one test's processes, named by the area that tags them (seen in a leftover's environment). */
export function newMarker(area: string): string {
  return `toolhost-${area}-test-${randomUUID()}`;
}

export interface MarkedProcess {
  readonly pid: number;
  /** argv joined with spaces. */
  readonly cmdline: string;
}

/** Every live (non-zombie) process whose cmdline or environ contains `marker`. */
export function findMarkedProcesses(marker: string): MarkedProcess[] {
  const found: MarkedProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const cmdline = readProcFile(pid, 'cmdline');
    const environ = readProcFile(pid, 'environ');
    if (cmdline === undefined || isZombie(pid)) continue;
    if (cmdline.includes(marker) || (environ?.includes(marker) ?? false)) {
      found.push({ pid, cmdline: cmdline.replaceAll('\0', ' ').trim() });
    }
  }
  return found;
}

/**
 * Polls until no process carries `marker`, or the deadline passes; returns what
 * remains. With `killSurvivors`, what remains is SIGKILLed too, so a failing
 * test leaves nothing behind for the next one.
 */
export async function waitForNoMarkedProcesses(marker: string, deadlineMs = 15_000, options: { readonly killSurvivors?: boolean } = {}): Promise<MarkedProcess[]> {
  const survivors = await pollUntil(() => {
    const remaining = findMarkedProcesses(marker);
    return { done: remaining.length === 0, value: remaining };
  }, deadlineMs);
  if (options.killSurvivors) {
    for (const { pid } of survivors) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  return survivors;
}

/**
 * Polls until no process of a finished call carries `marker`. A one-shot tool's
 * runner keeps the next call's sandbox prepared, waiting at its start gate (the
 * shell that reads one line before exec'ing the tool): that shell and the
 * bubblewrap processes above it are not the call's and are left out. Whatever
 * the tool started, or a gate shell that already ran the tool, still counts.
 */
export async function waitForNoCallProcesses(marker: string, deadlineMs = 15_000): Promise<MarkedProcess[]> {
  return pollUntil(() => {
    const remaining = withoutPreparedSandboxes(findMarkedProcesses(marker));
    return { done: remaining.length === 0, value: remaining };
  }, deadlineMs);
}

// The gate script ends the shell's -c argument (see START_GATE_SCRIPT in sandbox-argv.ts).
const GATE_SCRIPT_END = 'read -r start && exec "$@"';

function withoutPreparedSandboxes(processes: readonly MarkedProcess[]): MarkedProcess[] {
  const prepared = new Set<number>();
  for (const candidate of processes) {
    const argv = (readProcFile(candidate.pid, 'cmdline') ?? '').split('\0');
    if (argv[1] !== '-c' || !(argv[2] ?? '').endsWith(GATE_SCRIPT_END)) continue;
    prepared.add(candidate.pid);
    // Its bubblewrap parents (the namespace's init and the outer bwrap).
    for (let pid = parentOf(candidate.pid); pid !== undefined && readProcFile(pid, 'comm')?.trim() === 'bwrap'; pid = parentOf(pid)) prepared.add(pid);
  }
  return processes.filter((process) => !prepared.has(process.pid));
}

function parentOf(pid: number): number | undefined {
  const stat = readProcFile(pid, 'stat');
  if (stat === undefined) return undefined;
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isInteger(ppid) && ppid > 1 ? ppid : undefined;
}

/** Live children of `parentPid` (from /proc), for finding a host's spawner process. */
export function findChildProcesses(parentPid: number): MarkedProcess[] {
  const found: MarkedProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || isZombie(pid) || parentOf(pid) !== parentPid) continue;
    found.push({ pid, cmdline: (readProcFile(pid, 'cmdline') ?? '').replaceAll('\0', ' ').trim() });
  }
  return found;
}

/** True while `pid` is a live (non-zombie) process. */
export function isAlive(pid: number): boolean {
  return !isZombie(pid);
}

// read(2)'s number, as /proc/PID/syscall names it, by architecture.
const READ_SYSCALL: Partial<Record<NodeJS.Architecture, string>> = { x64: '0', arm64: '63' };

/**
 * True when `pid` sleeps inside read(0, …): the kernel's own word that it waits for
 * its stdin (a start gate that has not opened), with no sleep to let it show otherwise.
 */
export function isBlockedReadingStdin(pid: number): boolean {
  const read = READ_SYSCALL[process.arch];
  if (read === undefined) throw new Error(`no read(2) number known for ${process.arch}`);
  const [number, fd] = (readProcFile(pid, 'syscall') ?? '').trim().split(' ');
  return number === read && fd === '0x0';
}

/** Polls until at least `count` processes carry `marker` (a readiness signal from /proc). */
export async function waitForMarkedProcesses(marker: string, count: number, deadlineMs = 30_000): Promise<MarkedProcess[]> {
  return pollUntil(() => {
    const found = findMarkedProcesses(marker);
    return { done: found.length >= count, value: found };
  }, deadlineMs);
}

function readProcFile(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'latin1');
  } catch {
    return undefined;
  }
}

function isZombie(pid: number): boolean {
  const stat = readProcFile(pid, 'stat');
  if (stat === undefined) return true;
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}
