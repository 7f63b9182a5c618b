// Process-group termination for process tools: SIGTERM, a grace, then SIGKILL,
// with tree-kill as the fallback and a sweep of every live group when the host
// exits. execa and child_process skip exit cleanup for detached children, so a
// host's ProcessGroups (built per host, see process-services.ts) remembers which
// of its groups are still alive.
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import treeKill from 'tree-kill';

/** SPEC section 3: the grace between SIGTERM and SIGKILL. */
export const DEFAULT_GRACE_MS = 250;
export const MAX_GRACE_MS = 1000;

interface KillOptions {
  /** Settles when the group leader has exited; ends the grace early. */
  readonly exited?: Promise<unknown>;
  /**
   * Send SIGTERM to the leader's descendants but not the leader. The leader of
   * a process tool is bubblewrap, which dies at once on SIGTERM and takes its
   * pid namespace down with it: sparing it gives the tool its grace. SIGKILL
   * still goes to the whole group.
   */
  readonly spareLeaderFromTerm?: boolean;
  /** The host's live groups (those that track this one), which forget it once it is killed. */
  readonly groups?: ProcessGroups;
}

/** The process groups one host started and that may still be alive; SIGKILLed when the host exits. */
export class ProcessGroups {
  private readonly live = new Set<number>();
  private sweep: (() => void) | undefined;

  /** Remembers a live group so the host-exit sweep can SIGKILL it. */
  track(pid: number): void {
    if (this.sweep === undefined) {
      // 'exit' handlers must be synchronous: process.kill is. A host killed with
      // SIGKILL never gets here; bubblewrap's --die-with-parent covers that case.
      this.sweep = () => this.killAllNow();
      process.on('exit', this.sweep);
    }
    this.live.add(pid);
  }

  /** Forgets a group once it is known to be gone. */
  untrack(pid: number): void {
    this.live.delete(pid);
  }

  get size(): number {
    return this.live.size;
  }

  /** Whether the group led by `pid` is one of these (tests, diagnostics). */
  has(pid: number): boolean {
    return this.live.has(pid);
  }

  /** SIGKILLs every group still tracked (host close or exit). */
  killAllNow(): void {
    for (const pid of this.live) signalGroup(pid, 'SIGKILL');
    this.live.clear();
  }

  /** Kills what is left and stops listening for the process's exit. */
  close(): void {
    this.killAllNow();
    if (this.sweep !== undefined) process.off('exit', this.sweep);
    this.sweep = undefined;
  }
}

/**
 * Kills the process group led by `pid`: SIGTERM, then SIGKILL after `graceMs`
 * (or as soon as `exited` settles). Resolves once SIGKILL has been sent and,
 * when `exited` is given, the leader has exited (bounded by another grace).
 */
export async function killProcessGroup(pid: number, graceMs = DEFAULT_GRACE_MS, options: KillOptions = {}): Promise<void> {
  const boundedGraceMs = Math.min(Math.max(0, graceMs), MAX_GRACE_MS);
  if (options.spareLeaderFromTerm === true) {
    await signalDescendantsOf(pid, 'SIGTERM');
  } else {
    signalGroup(pid, 'SIGTERM');
  }
  if (boundedGraceMs > 0) await settleWithin(options.exited, boundedGraceMs);
  // SIGKILL even when the leader has exited: stragglers may still hold the group.
  signalGroup(pid, 'SIGKILL');
  if (options.exited !== undefined) await settleWithin(options.exited, MAX_GRACE_MS);
  options.groups?.untrack(pid);
}

/** SIGKILLs the group at once, no grace (host shutdown, output floods). */
export function killProcessGroupNow(pid: number): void {
  signalGroup(pid, 'SIGKILL');
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  // Read before the group's SIGKILL (a dead leader's children are reparented), signalled after:
  // a child killed first could be reaped by the leader, which then exits 0 instead of by SIGKILL.
  const children = signal === 'SIGKILL' ? readChildrenNow(pid) : [];
  try {
    process.kill(-pid, signal);
  } catch (error) {
    // ESRCH: already gone. Otherwise not a group leader or not permitted as a group: walk the tree instead.
    if (errorCode(error) !== 'ESRCH') treeKill(pid, signal, () => undefined);
  }
  signalEach(children, 'SIGKILL');
}

// The leader of a sandbox is bubblewrap; its child is the pid namespace's init,
// in a session of its own (--new-session), which dies with the leader only
// through PR_SET_PDEATHSIG, armed by bubblewrap in the init after its fork. A
// CI run once left the init and a whole storm alive after the group's SIGKILL.
// SIGKILLing the init itself ends the namespace and everything in it at once,
// whatever became of that signal. Synchronous: the host's exit sweep calls it.
function readChildrenNow(leaderPid: number): number[] {
  let list: string;
  try {
    list = readFileSync(`/proc/${leaderPid}/task/${leaderPid}/children`, 'latin1');
  } catch {
    return []; // gone, or no children files: the group's SIGKILL is all there is
  }
  return parseChildList(list);
}

/** The pids of a /proc/PID/task/TID/children file ("12 34 "). */
function parseChildList(list: string): number[] {
  return list
    .split(' ')
    .filter((word) => word !== '')
    .map(Number)
    .filter((child) => Number.isInteger(child) && child > 1);
}

function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // exited meanwhile
    }
  }
}

// SIGTERMs every descendant of the leader, whatever its group or session
// (bubblewrap's --new-session puts the tool in a session of its own, out of
// the leader's group). The tree is walked down from the leader through
// /proc/PID/task/TID/children, which costs a few reads per process in the
// tree; scanning the parent link of every process on the machine took tens of
// milliseconds on a busy host, and the deadline waits for it.
async function signalDescendantsOf(leaderPid: number, signal: NodeJS.Signals): Promise<void> {
  // Linux 3.5+ with CONFIG_PROC_CHILDREN (every mainstream kernel) has them. Asked at each
  // kill (one stat) rather than remembered in a module: kills are not on a call's fast path.
  if (!existsSync(`/proc/self/task/${process.pid}/children`)) {
    await signalDescendantsByScan(leaderPid, signal);
    return;
  }
  const seen = new Set<number>([leaderPid]);
  const descendants: number[] = [];
  let level = [leaderPid];
  while (level.length > 0) {
    const children = (await Promise.all(level.map(readChildPids))).flat().filter((pid) => !seen.has(pid));
    for (const pid of children) seen.add(pid);
    descendants.push(...children);
    level = children;
  }
  // Signalled once the whole tree is read, not level by level: a process that ends on the
  // signal (a shell's TERM trap) would orphan its children before the walk reached them.
  signalEach(descendants, signal);
}

/** Children of every thread of `pid` (a process forks from any of its threads); [] once it is gone. */
async function readChildPids(pid: number): Promise<number[]> {
  let threads: string[];
  try {
    threads = await readdir(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const lists = await Promise.all(threads.map((tid) => readFile(`/proc/${pid}/task/${tid}/children`, 'latin1').catch(() => '')));
  return lists.flatMap(parseChildList);
}

// The fallback: the parent link in /proc/PID/stat of every process on the machine.
async function signalDescendantsByScan(leaderPid: number, signal: NodeJS.Signals): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    signalGroup(leaderPid, signal);
    return;
  }
  const childrenOf = new Map<number, number[]>();
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    const parentPid = await readParentPid(pid);
    if (parentPid === undefined) continue;
    const siblings = childrenOf.get(parentPid);
    if (siblings === undefined) childrenOf.set(parentPid, [pid]);
    else siblings.push(pid);
  }
  // The whole tree from the map first, then the signals (as above: none orphaned mid-walk).
  const descendants: number[] = [];
  const pending = [...(childrenOf.get(leaderPid) ?? [])];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    descendants.push(pid);
    pending.push(...(childrenOf.get(pid) ?? []));
  }
  signalEach(descendants, signal);
}

async function readParentPid(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const parentPid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(parentPid) ? parentPid : undefined;
  } catch {
    return undefined;
  }
}

async function settleWithin(promise: Promise<unknown> | undefined, timeoutMs: number): Promise<void> {
  if (promise === undefined) {
    await new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  try {
    await Promise.race([
      promise.then(
        () => undefined,
        () => undefined,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}
