// One-shot process tools: arguments as JSON on stdin, the answer on stdout.
// Output is counted as it streams; timeout, cancel and the output cap kill the
// whole pid namespace through the process group; the call settles only after
// the wrapper has exited and the pipes are closed, so no process outlives it.
import type { Logger } from '../../log.js';
import type { RunSpec } from '../types.js';
import { outputLimitDetails } from '../../registry/result-limits.js';
import type { Job, RunOptions, RunOutcome } from '../run-types.js';
import { DEFAULT_GRACE_MS, killProcessGroup } from './kill.js';
import { ByteBudget, ChunkCollector, TailBuffer, decodeUtf8Strict } from './output-cap.js';
import type { ErrorCode } from '../../errors.js';
import { asTermination, classifyFailedExit, elapsedMs, failRun, type TerminationReason } from './process-outcome.js';
import type { OneShotSandboxes, ProcessSandboxServices } from './oneshot-sandboxes.js';
import type { SpawnedTool } from './spawn.js';
import { START_LINE } from '../bwrap/argv.js';

interface OneShotDeps {
  readonly logger: Logger;
  readonly graceMs?: number;
  /** The host's services (its live groups forget a killed one). */
  readonly services: ProcessSandboxServices;
}

/** Runs one call of a one-shot process tool in a sandbox of its own; never throws for tool failures. */
export async function runOneShot(spec: RunSpec, job: Job, options: RunOptions, deps: OneShotDeps, sandboxes: OneShotSandboxes): Promise<RunOutcome> {
  const startedMs = performance.now();
  if (options.control.reason !== undefined) return failRun(asTermination(options.control.reason), {}, startedMs);
  const started = await sandboxes.take(options.control.timeoutMs);
  if (!started.ok) return failRun('sandbox_unavailable', { reason: started.reason }, startedMs);
  // The sandbox's network attempts from now on are this call's.
  started.sandbox.egress?.attach(options.onEgress);
  try {
    const { cgroup } = started.sandbox;
    return await superviseOneShot(spec, job, options, deps, started.sandbox.tool, startedMs, () => deps.services.cgroups.oomKills(cgroup));
  } finally {
    // What is left of it (the workdir, the egress grant) is freed after the answer, not on its path.
    sandboxes.release(started.sandbox);
  }
}

async function superviseOneShot(
  spec: RunSpec,
  job: Job,
  options: RunOptions,
  deps: OneShotDeps,
  tool: SpawnedTool,
  startedMs: number,
  oomKills: () => Promise<number>,
): Promise<RunOutcome> {
  const { control } = options;
  const budget = new ByteBudget(spec.floodCapBytes);
  const stdout = new ChunkCollector();
  const stderrTail = new TailBuffer();
  let killing: Promise<void> | undefined;

  // What this call stops when its control says so (deadline, cancel, shutdown, output cap):
  // the whole process group, at once for a flood of output, else after the grace.
  const kill = (why: ErrorCode): void => {
    if (tool.pid === undefined || killing !== undefined) return;
    const now = why === 'output_limit';
    killing = killProcessGroup(tool.pid, now ? 0 : (deps.graceMs ?? DEFAULT_GRACE_MS), {
      exited: tool.ended,
      spareLeaderFromTerm: !now,
      groups: deps.services.groups,
    });
  };
  const onOutput = (chunk: Buffer, isStdout: boolean): void => {
    if (control.reason !== undefined) return;
    if (!budget.spend(chunk.length)) {
      // Stop reading at once: a flood must not be buffered while the kill lands.
      tool.stdout.destroy();
      tool.stderr.destroy();
      control.stop('output_limit');
      return;
    }
    if (isStdout) stdout.push(chunk);
    else stderrTail.push(chunk);
  };
  tool.stdout.on('data', (chunk: Buffer) => onOutput(chunk, true));
  tool.stderr.on('data', (chunk: Buffer) => onOutput(chunk, false));

  const unregister = control.onStop(kill);
  // Open the sandbox's start gate; the tool then reads its arguments.
  tool.stdin.end(`${START_LINE}${JSON.stringify(job.args)}`);

  try {
    const exit = await tool.ended;
    if (killing !== undefined) await killing;
    if (control.reason !== undefined) {
      const reason = asTermination(control.reason);
      return failRun(reason, reasonDetails(reason, spec, options, budget), startedMs);
    }
    if (exit.kind === 'exited' && exit.exitCode === 0) return succeed(spec, stdout.concat(), startedMs);
    // The kernel killed a process of the sandbox at its memory cgroup's limit: whatever the exit, that is why.
    if (exit.kind === 'exited' && (await oomKills()) > 0)
      return failRun('memory_limit', { memoryMb: spec.memoryMb, reason: 'cgroup_oom', stderrTail: stderrTail.toText() }, startedMs);
    const outcome = classifyFailedExit(exit, stderrTail.toText(), startedMs);
    deps.logger.debug({ tool: spec.name, callId: job.callId, code: outcome.ok ? undefined : outcome.code }, 'process tool failed');
    return outcome;
  } finally {
    unregister();
  }
}

function succeed(spec: RunSpec, bytes: Buffer, startedMs: number): RunOutcome {
  if (spec.stdout === 'text') {
    return { ok: true, output: { type: 'text', bytes: new Uint8Array(bytes) }, durationMs: elapsedMs(startedMs) };
  }
  // The supervisor does the strict JSON checks on this exact text; here only UTF-8.
  const json = decodeUtf8Strict(bytes);
  if (json === undefined) return failRun('invalid_output', { reason: 'invalid_utf8', bytes: bytes.length }, startedMs);
  return { ok: true, output: { type: 'json', json }, durationMs: elapsedMs(startedMs) };
}

function reasonDetails(reason: TerminationReason, spec: RunSpec, options: RunOptions, budget: ByteBudget): Record<string, unknown> {
  switch (reason) {
    case 'timeout':
      return { timeoutMs: options.control.timeoutMs };
    case 'output_limit':
      return outputLimitDetails({ reason: 'flood_cap', bytes: budget.totalBytes, limit: spec.floodCapBytes });
    default:
      return {};
  }
}
