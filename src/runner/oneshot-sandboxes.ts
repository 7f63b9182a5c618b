// Sandboxes for one one-shot process tool, started one call ahead. Starting
// bubblewrap (namespaces, mounts, a fresh /proc, the limits, the cgroup join)
// is most of a one-shot call's cost; every call still gets a sandbox of its
// own, but the next one is started while the current call runs, and waits at
// its start gate (sandbox-argv.ts) until a call opens it. No tool code runs
// before its call: the gate is a shell reading one line, then exec'ing the tool.
import type { Logger } from '../log.js';
import type { RunSpec } from './runner.js';
import { killProcessGroupNow } from './kill.js';
import { resolveSandboxArgv } from './process-sandbox.js';
import { openWorkdir, spawnTool, type SpawnedTool, type Workdir } from './process-spawn.js';

/** A started sandbox waiting at its gate, with the workdir it runs in. */
export interface StartedSandbox {
  readonly tool: SpawnedTool;
  readonly workdir: Workdir;
}

export type SandboxStart = { readonly ok: true; readonly sandbox: StartedSandbox } | { readonly ok: false; readonly reason: string };

export interface OneShotSandboxesDeps {
  readonly logger: Logger;
  readonly bwrapPath?: string;
  /** How long a prepared sandbox may wait unused; default PREPARED_IDLE_MS. */
  readonly preparedIdleMs?: number;
}

/** A prepared sandbox unused this long is stopped (its processes and cgroup freed). */
export const PREPARED_IDLE_MS = 60_000;

interface Prepared {
  readonly timeoutMs: number;
  readonly start: Promise<SandboxStart>;
  hasEnded: boolean;
}

export class OneShotSandboxes {
  private prepared: Prepared | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private isClosed = false;
  /** Prepared sandboxes being stopped: close() waits for them. */
  private readonly stopping = new Set<Promise<void>>();

  constructor(
    private readonly spec: RunSpec,
    private readonly deps: OneShotSandboxesDeps,
  ) {}

  /**
   * A sandbox for one call with this timeout (it sets the CPU limit): the one
   * prepared ahead when it matches and is still alive, else a new one. Either
   * way the next one starts preparing.
   */
  async take(timeoutMs: number): Promise<SandboxStart> {
    const prepared = this.prepared;
    this.prepared = undefined;
    let start: Promise<SandboxStart>;
    if (prepared !== undefined && prepared.timeoutMs === timeoutMs) {
      start = prepared.start;
    } else {
      if (prepared !== undefined) this.stop(prepared);
      start = this.start(timeoutMs);
    }
    // Asked for after this call's own start, so the spawner serves this call first.
    this.prepare(timeoutMs);
    const result = await start;
    if (result.ok && prepared?.start === start && prepared.hasEnded) {
      // It died while waiting (killed from outside, spawner gone): start afresh.
      await result.sandbox.workdir.dispose();
      return this.start(timeoutMs);
    }
    return result;
  }

  /** Stops the prepared sandbox; later calls to take() start none. */
  async close(): Promise<void> {
    this.isClosed = true;
    clearTimeout(this.idleTimer);
    if (this.prepared !== undefined) this.stop(this.prepared);
    this.prepared = undefined;
    await Promise.all([...this.stopping]);
  }

  private prepare(timeoutMs: number): void {
    if (this.isClosed) return;
    const start = this.start(timeoutMs);
    const prepared: Prepared = { timeoutMs, start, hasEnded: false };
    start.then(
      (result) => {
        if (result.ok) void result.sandbox.tool.exited.then(() => (prepared.hasEnded = true));
      },
      // take() or stop() reports the failure; this watcher only must not leave it unhandled.
      () => undefined,
    );
    this.prepared = prepared;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.prepared === prepared) {
        this.prepared = undefined;
        this.stop(prepared);
      }
    }, this.deps.preparedIdleMs ?? PREPARED_IDLE_MS);
    // An idle host may exit with a sandbox prepared: it dies with the spawner.
    this.idleTimer.unref();
  }

  private async start(timeoutMs: number): Promise<SandboxStart> {
    const workdir = await openWorkdir(this.spec);
    try {
      const sandbox = await resolveSandboxArgv(this.spec, { cwd: workdir.cwd, timeoutMs, ...(this.deps.bwrapPath !== undefined ? { bwrapPath: this.deps.bwrapPath } : {}) });
      if (!sandbox.ok) {
        await workdir.dispose();
        return { ok: false, reason: sandbox.reason };
      }
      const tool = await spawnTool(sandbox.argv, this.spec.env, workdir.cwd, this.deps.logger);
      return { ok: true, sandbox: { tool, workdir } };
    } catch (error) {
      await workdir.dispose();
      throw error;
    }
  }

  // An unused sandbox never opened its gate: SIGKILL it and free its workdir.
  private stop(prepared: Prepared): void {
    const stopped = prepared.start
      .then(async (result) => {
        if (!result.ok) return;
        const { tool, workdir } = result.sandbox;
        if (tool.pid !== undefined) killProcessGroupNow(tool.pid);
        tool.stdout.destroy();
        tool.stderr.destroy();
        await tool.ended;
        await workdir.dispose();
      })
      .catch((error: unknown) => this.deps.logger.warn({ tool: this.spec.name, err: error }, 'stopping a prepared sandbox failed'))
      .finally(() => this.stopping.delete(stopped));
    this.stopping.add(stopped);
  }
}
