// The process runner (SPEC section 3): one-shot or persistent, every process in
// its own process group and pid namespace, output byte-capped, env allowlisted.
import type { Logger } from '../../log.js';
import type { RunSpec, Runner } from '../types.js';
import type { Job, RunControl, RunOptions, RunOutcome } from '../run-types.js';
import { runOneShot } from './oneshot.js';
import { ProcessPool } from './pool.js';
import { OneShotSandboxes, type ProcessSandboxServices } from './oneshot-sandboxes.js';
import { failRun } from './process-outcome.js';
import type { EgressSettings } from './process-sandbox.js';

export interface ProcessRunnerDeps {
  readonly logger: Logger;
  /** SIGTERM→SIGKILL grace in ms; default 250, at most 1000. */
  readonly graceMs?: number;
  /** A specific bubblewrap binary; default `bwrap` on PATH. */
  readonly bwrapPath?: string;
  /** One-shot tools: how long the sandbox prepared for the next call may wait unused. */
  readonly preparedIdleMs?: number;
  /** One-shot tools: how many sandboxes to keep prepared for the next calls (0: none). */
  readonly preparedAhead?: number;
  /** One-shot tools: how many tools of this host keep sandboxes prepared at a time. */
  readonly maxToolsPrepared?: number;
  /** The host's spawner, groups, cgroups, machine facts and prepared-sandbox bound (its ProcessServices). */
  readonly services: ProcessSandboxServices;
  /** Namespaced tools with a network allow list: how their egress proxies are set up. */
  readonly egress?: EgressSettings;
}

/** Builds the runner for one `mode: process` tool. */
export function createProcessRunner(spec: RunSpec, deps: ProcessRunnerDeps): Runner {
  const logger = deps.logger.child({ tool: spec.name, runner: 'process' });
  const runnerDeps = { ...deps, logger };
  const guard = (job: Job, outcome: Promise<RunOutcome>, startedMs: number): Promise<RunOutcome> =>
    // run() never throws: anything unexpected is the host's bug, reported as `internal`.
    outcome.catch((error: unknown) => {
      logger.error({ callId: job.callId, err: error }, 'process runner failed');
      return failRun('internal', {}, startedMs);
    });

  if (spec.persistent) {
    const pool = new ProcessPool(spec, runnerDeps);
    return {
      mode: 'process',
      run: (job, options) => {
        const startedMs = performance.now();
        // Called directly (no microtask hop first): a throw before its promise exists is guarded too.
        try {
          return guard(job, pool.run(job, options), startedMs);
        } catch (error) {
          return guard(job, Promise.reject(error), startedMs);
        }
      },
      close: () => pool.close(),
    };
  }
  let isClosed = false;
  const sandboxes = new OneShotSandboxes(spec, runnerDeps);
  const running = new Map<RunControl, Promise<RunOutcome>>();
  return {
    mode: 'process',
    async run(job: Job, options: RunOptions): Promise<RunOutcome> {
      const startedMs = performance.now();
      if (isClosed) return failRun('cancelled', {}, startedMs);
      const outcome = guard(job, runOneShot(spec, job, options, runnerDeps, sandboxes), startedMs);
      running.set(options.control, outcome);
      try {
        return await outcome;
      } finally {
        running.delete(options.control);
      }
    },
    async close(): Promise<void> {
      isClosed = true;
      // close() reaches one-shot calls through their controls, like a client cancel.
      for (const control of running.keys()) control.stop('cancelled');
      // Settle only once every process is gone, the prepared sandbox too.
      await Promise.allSettled([...running.values(), sandboxes.close()]);
    },
  };
}
