// Sandboxes for one one-shot process tool, started ahead of their calls.
// Starting bubblewrap (namespaces, mounts, a fresh /proc, the limits, the
// cgroup join) is most of a one-shot call's cost; every call still gets a
// sandbox of its own, but it was started earlier and waits at its start gate
// (bwrap/argv.ts) until a call opens it. No tool code runs before its call:
// the gate is a shell reading one line, then exec'ing the tool. What a call
// leaves (its workdir, egress grant and cgroup) is freed after its answer, in the
// background: nothing of it is needed for the answer.
import { readFileSync } from 'node:fs';
import type { Logger } from '../../log.js';
import type { RunSpec } from '../types.js';
import { killProcessGroupNow } from './kill.js';
import type { SandboxArgvServices } from '../bwrap/argv.js';
import type { SandboxCgroup } from '../bwrap/sandbox-cgroups.js';
import type { EgressGrant } from '../bwrap/egress-grant.js';
import { resolveSandboxArgv, sandboxSetupOf, withEgress, type EgressSettings } from './process-sandbox.js';
import { openWorkdir, privateSandboxWorkdir, spawnTool, type SpawnedTool, type SpawnServices, type Workdir } from './spawn.js';

/** A started sandbox waiting at its gate, with the workdir it runs in. */
interface StartedSandbox {
  readonly tool: SpawnedTool;
  /** Its dispose() also closes the egress grant. */
  readonly workdir: Workdir;
  /** The sandbox's way out, when the tool has a network allow list (namespace only). */
  readonly egress: EgressGrant | undefined;
  /** Its cgroup (its OOM kills say a failure was the memory limit), removed once it has ended. */
  readonly cgroup: SandboxCgroup | undefined;
}

type SandboxStart = { readonly ok: true; readonly sandbox: StartedSandbox } | { readonly ok: false; readonly reason: string };

interface OneShotSandboxesDeps {
  readonly logger: Logger;
  /** The host's spawner, groups, cgroups, machine facts and prepared-sandbox bound. */
  readonly services: ProcessSandboxServices;
  readonly bwrapPath?: string;
  /** How long prepared sandboxes may wait unused; default PREPARED_IDLE_MS. */
  readonly preparedIdleMs?: number;
  /** How many sandboxes to keep prepared; default PREPARED_AHEAD. */
  readonly preparedAhead?: number;
  /** How many tools of this host keep sandboxes prepared; default MAX_TOOLS_PREPARED. */
  readonly maxToolsPrepared?: number;
  readonly egress?: EgressSettings;
}

/** Prepared sandboxes unused this long are stopped (their processes and cgroups freed). */
const PREPARED_IDLE_MS = 60_000;
/**
 * Sandboxes kept prepared per tool, by isolation. Setting one up with namespace
 * isolation (user, mount and network namespaces, a dozen mounts) takes about 10 ms
 * here, longer than a quick tool runs: back-to-back calls caught a single prepared
 * sandbox still setting up (p50 11.8 ms with one ahead, 7.8 ms with two). With
 * isolation none it takes about 5 ms and a second one only competed for the CPU.
 */
const PREPARED_AHEAD = { none: 1, namespace: 2 } as const;

/**
 * Tools of one host that keep sandboxes prepared at a time: each prepared
 * sandbox is two or three idle processes, a cgroup and perhaps a mount
 * namespace, so a host whose agent touched fifty tools once must not keep
 * fifty of them. The tool used least recently gives its up first.
 */
export const MAX_TOOLS_PREPARED = 8;

/** The one-shot tools of one host that keep sandboxes prepared, least recently used first. */
export class PreparedSandboxes {
  // Map order: least recently used first.
  private readonly tools = new Map<OneShotSandboxes, true>();

  constructor(readonly maxTools: number = MAX_TOOLS_PREPARED) {}

  /** `tool` just prepared sandboxes: beyond the bound, the least recently used stops its own. */
  touch(tool: OneShotSandboxes, maxTools = this.maxTools): void {
    this.tools.delete(tool);
    this.tools.set(tool, true);
    for (const candidate of [...this.tools.keys()]) {
      if (this.tools.size <= maxTools) break;
      candidate.stopPrepared();
    }
  }

  forget(tool: OneShotSandboxes): void {
    this.tools.delete(tool);
  }

  /** How many tools keep sandboxes prepared now (tests, diagnostics). */
  get size(): number {
    return this.tools.size;
  }
}

/** What preparing and starting sandboxes goes through: a host's ProcessServices. */
export interface ProcessSandboxServices extends SpawnServices, SandboxArgvServices {
  readonly prepared: PreparedSandboxes;
}

interface Prepared {
  readonly timeoutMs: number;
  readonly start: Promise<SandboxStart>;
  hasEnded: boolean;
}

export class OneShotSandboxes {
  /** Oldest first: the next call takes prepared[0]. */
  private prepared: Prepared[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private isClosed = false;
  /** Prepared sandboxes being stopped and finished ones being freed: close() waits for them. */
  private readonly settling = new Set<Promise<void>>();
  private readonly ahead: number;
  private readonly services: ProcessSandboxServices;

  constructor(
    private readonly spec: RunSpec,
    private readonly deps: OneShotSandboxesDeps,
  ) {
    this.services = deps.services;
    this.ahead = Math.max(0, Math.floor(deps.preparedAhead ?? PREPARED_AHEAD[spec.isolation === 'namespace' ? 'namespace' : 'none']));
  }

  /**
   * A sandbox for one call with this timeout (it sets the CPU limit): the oldest
   * prepared one when it matches and is still alive, else a new one. Either way
   * the queue of prepared sandboxes is topped up behind it. The caller hands the
   * sandbox back with release() when the call is over.
   */
  async take(timeoutMs: number): Promise<SandboxStart> {
    // Prepared for another timeout (another CPU limit): of no use now.
    for (const stale of this.prepared.filter((candidate) => candidate.timeoutMs !== timeoutMs)) this.stop(stale);
    this.prepared = this.prepared.filter((candidate) => candidate.timeoutMs === timeoutMs);
    const prepared = this.prepared.shift();
    const start = prepared?.start ?? this.start(timeoutMs);
    // Asked for after this call's own start, so the spawner serves this call first. (Started
    // after the answer instead, the next sandbox's setup ran right beside the next call's
    // tool: one-shot calls 10-20% slower on a loaded machine.)
    this.topUp(timeoutMs);
    const result = await start;
    if (result.ok && prepared !== undefined && (prepared.hasEnded || !isRunning(result.sandbox.tool.pid))) {
      // It died while waiting (killed from outside, spawner gone): start afresh. Its leader may
      // be dead before the spawner's word of it arrives (a loaded host), so /proc is asked too.
      // What it leaves (workdir, cgroup) is freed once it has ended, as after a call.
      this.release(result.sandbox);
      return this.start(timeoutMs);
    }
    return result;
  }

  /**
   * The call that took `sandbox` is over, its processes gone: the sandbox's
   * workdir, egress grant and cgroup are freed in the background (close()
   * waits for that), not on the call's path, where removing the workdir was a
   * round trip to the thread pool: 0.1 ms idle, up to 10 ms on a loaded machine.
   */
  release(sandbox: StartedSandbox): void {
    // Late attempts (none: its processes are gone) are only logged, never counted to this call.
    sandbox.egress?.detach();
    // After `ended` (settled already when the call got its outcome): never under a live tool.
    this.settle(
      sandbox.tool.ended.then(() => this.free(sandbox)),
      'freeing a finished sandbox failed',
    );
  }

  /** Stops the prepared sandboxes and waits for every sandbox being stopped or freed; later calls to take() prepare none. */
  async close(): Promise<void> {
    this.isClosed = true;
    this.stopPrepared();
    await Promise.all([...this.settling]);
  }

  private topUp(timeoutMs: number): void {
    if (this.isClosed || this.ahead === 0) return;
    while (this.prepared.length < this.ahead) this.prepared.push(this.prepare(timeoutMs));
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stopPrepared(), this.deps.preparedIdleMs ?? PREPARED_IDLE_MS);
    // An idle host may exit with sandboxes prepared: they die with the spawner.
    this.idleTimer.unref();
    // Most recently used last; beyond the cap, the least recently used tool stops its own.
    this.services.prepared.touch(this, this.deps.maxToolsPrepared ?? this.services.prepared.maxTools);
  }

  /** Stops this tool's prepared sandboxes (idle, or another tool of the host needs the room). */
  stopPrepared(): void {
    clearTimeout(this.idleTimer);
    this.services.prepared.forget(this);
    for (const prepared of this.prepared.splice(0)) this.stop(prepared);
  }

  private prepare(timeoutMs: number): Prepared {
    const start = this.start(timeoutMs);
    const prepared: Prepared = { timeoutMs, start, hasEnded: false };
    start.then(
      (result) => {
        if (result.ok) void result.sandbox.tool.exited.then(() => (prepared.hasEnded = true));
      },
      // take() or stop() reports the failure; this watcher only must not leave it unhandled.
      () => undefined,
    );
    return prepared;
  }

  private async start(timeoutMs: number): Promise<SandboxStart> {
    // A namespaced tool without a root gets its private directory inside the sandbox.
    let workdir = this.spec.isolation === 'namespace' && this.spec.roots.length === 0 ? privateSandboxWorkdir() : await openWorkdir(this.spec);
    try {
      const sandbox = await resolveSandboxArgv(this.spec, {
        cwd: workdir.cwd,
        ...(workdir.isInSandbox === true ? { cwdInPrivateTmp: true } : {}),
        // free() removes it once the sandbox has ended, used or stopped.
        removesCgroup: true,
        timeoutMs,
        logger: this.deps.logger,
        services: this.services,
        ...(this.deps.bwrapPath !== undefined ? { bwrapPath: this.deps.bwrapPath } : {}),
        ...(this.deps.egress !== undefined ? { egress: this.deps.egress } : {}),
      });
      if (!sandbox.ok) {
        await workdir.dispose();
        return { ok: false, reason: sandbox.reason };
      }
      workdir = withEgress(workdir, sandbox.egress);
      // bubblewrap starts where the host can chdir (a directory made inside exists only there) and enters the tool's with --chdir.
      const tool = await spawnTool(sandbox.argv, this.spec.env, workdir.isInSandbox === true ? '/' : workdir.cwd, this.services, sandboxSetupOf(sandbox.egress));
      return { ok: true, sandbox: { tool, workdir, egress: sandbox.egress, cgroup: sandbox.cgroup } };
    } catch (error) {
      await workdir.dispose();
      throw error;
    }
  }

  // An unused sandbox never opened its gate: SIGKILL it and free its workdir.
  private stop(prepared: Prepared): void {
    const stopped = prepared.start.then(async (result) => {
      if (!result.ok) return;
      const { tool } = result.sandbox;
      if (tool.pid !== undefined) killProcessGroupNow(tool.pid);
      tool.stdout.destroy();
      tool.stderr.destroy();
      await tool.ended;
      await this.free(result.sandbox);
    });
    this.settle(stopped, 'stopping a prepared sandbox failed');
  }

  // What an ended sandbox leaves on the host: its workdir (and egress grant) and its cgroup.
  private async free(sandbox: StartedSandbox): Promise<void> {
    await Promise.all([sandbox.workdir.dispose(), sandbox.cgroup === undefined ? undefined : this.services.cgroups.remove(sandbox.cgroup)]);
  }

  // Work in the background that close() waits for; a failure is logged, never thrown at a call.
  private settle(work: Promise<void>, failure: string): void {
    const settled = work.catch((error: unknown) => this.deps.logger.warn({ tool: this.spec.name, err: error }, failure)).finally(() => this.settling.delete(settled));
    this.settling.add(settled);
  }
}

/** False once `pid` has exited (gone, or a zombie its parent has not reaped yet). */
function isRunning(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // "pid (comm) state ...": comm may hold spaces and parentheses.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
