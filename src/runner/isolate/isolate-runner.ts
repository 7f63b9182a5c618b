// isolate runner: untrusted JavaScript in isolated-vm isolates, which live in an
// isolate process (sandbox/isolate-process.mjs) in the namespace sandbox, never
// in the host. One process per tool, started ahead when the runner is built,
// replaced after a crash, and given up when the host's bound on live isolate
// processes needs room (least recently used first). Each call gets a fresh
// context in an isolate no concurrent call shares, a deadline held here and
// over there, and answers that were bounded before they crossed.
import type { Logger } from '../../log.js';
import type { Runner, RunSpec } from '../types.js';
import type { Job, RunOptions, RunOutcome } from '../wire.js';
import { failure, toRunOutcome, type Outcome } from '../tool-envelope.js';
import { startIsolateProcess, type IsolateProcess, type IsolateProcessStart, type IsolateSandboxServices } from './isolate-process.js';
import type { IsolateProcesses, IsolateProcessOwner } from './isolate-processes.js';
import type { EgressSettings } from '../process/process-sandbox.js';

export interface IsolateRunnerDeps {
  readonly logger: Logger;
  /** The host's spawner, groups, cgroups, machine facts and live isolate processes (its ProcessServices). */
  readonly services: IsolateSandboxServices & { readonly isolateProcesses: IsolateProcesses };
  /** A specific bubblewrap binary (a seam for tests and odd installs); default `bwrap` on PATH. */
  readonly bwrapPath?: string;
  /** Tools with a network allow list: their egress proxy's limits and resolver. */
  readonly egress?: EgressSettings;
}

/** Builds the runner for one `mode: isolate` tool. */
export function createIsolateRunner(spec: RunSpec, deps: IsolateRunnerDeps): Runner {
  const logger = deps.logger.child({ runner: 'isolate', tool: spec.name });
  const registry = deps.services.isolateProcesses;
  let current: IsolateProcess | undefined;
  let starting: Promise<IsolateProcessStart> | undefined;
  let closed = false;

  const owner: IsolateProcessOwner = {
    stopIfIdle() {
      if (current === undefined || current.inFlight > 0 || starting !== undefined) return false;
      current.kill();
      current = undefined;
      return true;
    },
  };

  /** The live process, starting one when there is none. */
  function ensureProcess(): Promise<IsolateProcessStart> {
    if (current?.isAlive === true) return Promise.resolve({ ok: true, process: current });
    starting ??= (async (): Promise<IsolateProcessStart> => {
      try {
        const started = await startIsolateProcess(spec, {
          logger,
          services: deps.services,
          ...(deps.bwrapPath !== undefined ? { bwrapPath: deps.bwrapPath } : {}),
          ...(deps.egress !== undefined ? { egress: deps.egress } : {}),
        });
        if (!started.ok) {
          logger.warn({ reason: started.reason }, 'isolate process could not start');
          return started;
        }
        if (closed) {
          started.process.kill();
          return { ok: false, reason: 'the runner closed' };
        }
        current = started.process;
        registry.noteStarted();
        watchExit(started.process);
        return started;
      } catch (error) {
        logger.error({ err: error }, 'isolate process could not start');
        return { ok: false, reason: 'the isolate process could not be started' };
      } finally {
        starting = undefined;
      }
    })();
    return starting;
  }

  // A crashed process is replaced ahead of the next call; one given up stays down.
  function watchExit(started: IsolateProcess): void {
    void started.exited.then(() => {
      if (current !== started) return;
      current = undefined;
      registry.forget(owner);
      if (!closed) void ensureProcess();
    });
  }

  // Started ahead, off the first call's path.
  registry.touch(owner);
  void ensureProcess();

  async function run(job: Job, options: RunOptions): Promise<RunOutcome> {
    const startedMs = performance.now();
    const finish = (outcome: Outcome): RunOutcome => toRunOutcome(outcome, performance.now() - startedMs);
    if (closed) return finish(failure('cancelled', 'The host is shutting down.', { reason: 'runner_closed' }));
    const { control } = options;
    if (control.reason !== undefined) return finish({ ok: false, ...control.failure() });
    registry.touch(owner);
    // The call's control holds the deadline, which covers the start of a process too.
    const stopped = control.stopped.then((): Outcome & { ok: false } => ({ ok: false, ...control.failure() }));
    const started = await Promise.race([ensureProcess(), stopped]);
    if ('code' in started) return finish(started);
    if (!started.ok) {
      return finish(failure('sandbox_unavailable', 'The sandbox for isolate tools is not available on this host.', { reason: started.reason }));
    }
    const remainingMs = Math.max(1, control.timeoutMs - (performance.now() - startedMs));
    const outcome = await started.process.run(job, options, remainingMs);
    if (!outcome.ok && closed && outcome.code === 'cancelled') {
      return finish(failure('cancelled', 'The host is shutting down.', { reason: 'runner_closed' }));
    }
    return finish(outcome);
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    registry.forget(owner);
    const pending = await starting;
    const process = current ?? (pending?.ok === true ? pending.process : undefined);
    current = undefined;
    if (process === undefined) return;
    process.abandon(failure('cancelled', 'The host is shutting down.', { reason: 'runner_closed' }));
    await process.exited;
  }

  async function ready(): Promise<void> {
    if (!closed) await ensureProcess();
  }

  return { mode: 'isolate', run, close, ready };
}
