// isolate runner: untrusted JavaScript in isolated-vm isolates, which live in an
// isolate process (sandbox/isolate/isolate-process.mjs) in the namespace sandbox, never
// in the host. One process per tool, started ahead when the runner is built,
// replaced after a crash, and given up when the host's bound on live isolate
// processes needs room (least recently used first). Each call gets a fresh
// context in an isolate no concurrent call shares, a deadline held here and
// over there, and answers that were bounded before they crossed. Starting a
// process is never a call's time: its deadline is held until the process is
// ready. A module whose top level ends its process while starting (its heap)
// fails every call with that verdict, and no process starts again for it, until
// its entry file changes.
import { defaultMessage } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Runner, RunSpec } from '../types.js';
import type { Job, RunOptions, RunOutcome } from '../run-types.js';
import { failure, toRunOutcome, type Outcome } from '../tool-envelope.js';
import type { IsolateProcess } from './isolate-process.js';
import { startIsolateProcess, type IsolateProcessStart, type IsolateSandboxServices } from './isolate-launch.js';
import { fileStampOf, sameStamp, type FileStamp } from './file-stamp.js';
import type { Failure } from './isolate-start.js';
import type { IsolateProcesses, IsolateProcessOwner } from './isolate-processes.js';
import type { EgressSettings } from '../process/process-sandbox.js';

interface IsolateRunnerDeps {
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
  /**
   * The tool's module ended its process's start (its top level ran out of memory): every
   * call gets that verdict, and no process is started again, until the entry file changes.
   */
  let verdict: { readonly outcome: Failure; readonly entry: FileStamp | undefined } | undefined;

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
          logger.warn({ reason: started.reason, ...(started.verdict !== undefined ? { code: started.verdict.code } : {}) }, 'isolate process could not start');
          if (started.verdict !== undefined) verdict = { outcome: started.verdict, entry: await fileStampOf(spec.entryPath) };
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

  // Started ahead, off the first call's path (ensureProcess never rejects: a failed start is a value).
  registry.touch(owner);
  void ensureProcess();

  async function run(job: Job, options: RunOptions): Promise<RunOutcome> {
    const startedMs = performance.now();
    const finish = (outcome: Outcome): RunOutcome => toRunOutcome(outcome, performance.now() - startedMs);
    if (closed) return finish(failure('cancelled', defaultMessage('cancelled', 'runner_closed'), { reason: 'runner_closed' }));
    const { control } = options;
    if (control.reason !== undefined) return finish({ ok: false, ...control.failure() });
    registry.touch(owner);
    let process = current?.isAlive === true ? current : undefined;
    // Time spent starting a process or waiting for a stop: not the call's (its deadline is held meanwhile).
    let startMs = 0;
    if (process?.isStopping === true) {
      // A call of it was stopped and the process has not said it is done yet: it may be wedged, and
      // then it is killed with every call in it. This call waits for the stop to be over instead
      // (at most the stop's grace), its deadline held, and runs there or in the next process.
      const start = performance.now();
      const held = await heldDeadline(options, process.stopsSettled());
      startMs += performance.now() - start;
      if (!('done' in held)) return finish(held);
      if (!process.isAlive) process = undefined;
    }
    if (process === undefined) {
      const start = performance.now();
      const started = await startForCall(options);
      startMs += performance.now() - start;
      if (!started.ok) return finish(started);
      process = started.process;
    }
    const remainingMs = Math.max(1, control.timeoutMs - (performance.now() - startedMs - startMs));
    const outcome = await process.run(job, options, remainingMs);
    if (!outcome.ok && closed && outcome.code === 'cancelled') {
      return finish(failure('cancelled', defaultMessage('cancelled', 'runner_closed'), { reason: 'runner_closed' }));
    }
    return finish(outcome);
  }

  /**
   * A live process for a call that found none: started (or its start under way awaited)
   * with the call's deadline held, since a start is never the call's time (SPEC 3), while
   * a cancel or shutdown still ends the wait. A start the tool's module made fail is that
   * verdict; any other failed start is `sandbox_unavailable` with its reason.
   */
  async function startForCall(options: RunOptions): Promise<{ ok: true; process: IsolateProcess } | Failure> {
    if (verdict !== undefined) {
      if (verdict.entry !== undefined && sameStamp(verdict.entry, await fileStampOf(spec.entryPath))) return verdict.outcome;
      verdict = undefined;
    }
    const held = await heldDeadline(options, ensureProcess());
    if (!('done' in held)) return held;
    const started = held.done;
    if (started.ok) return started;
    if (started.verdict !== undefined) return started.verdict;
    return { ok: false, code: 'sandbox_unavailable', message: 'The isolate process of this tool could not start.', details: { reason: started.reason } };
  }

  /**
   * `work` awaited with the call's deadline held, since what it waits for (a start, an earlier
   * call's stop) is not the call's time (SPEC 3), while a cancel or shutdown still ends the wait.
   */
  async function heldDeadline<T>(options: RunOptions, work: Promise<T>): Promise<{ done: T } | Failure> {
    const { control } = options;
    const resume = control.pauseDeadline?.();
    try {
      const stopped = control.stopped.then((): Failure => ({ ok: false, ...control.failure() }));
      return await Promise.race([work.then((done) => ({ done })), stopped]);
    } finally {
      resume?.();
    }
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    registry.forget(owner);
    const pending = await starting;
    const process = current ?? (pending?.ok === true ? pending.process : undefined);
    current = undefined;
    if (process === undefined) return;
    process.abandon(failure('cancelled', defaultMessage('cancelled', 'runner_closed'), { reason: 'runner_closed' }));
    await process.exited;
  }

  async function ready(): Promise<void> {
    if (!closed && verdict === undefined) await ensureProcess();
  }

  return { mode: 'isolate', run, close, ready };
}
