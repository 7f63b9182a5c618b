// Persistent process tools: a warm pool of `poolSize` long-lived processes
// speaking NDJSON (see ndjson.ts), one call at a time per process and a FIFO
// queue when all are busy. A process that is killed (timeout, cancel, output
// cap, a line that is not JSON) or crashes after answering is replaced at
// once; one that dies before its first answer only on demand, so a tool that
// cannot start does not respawn in a loop.
import type { Logger } from '../../log.js';
import type { RunSpec } from '../types.js';
import { outputLimitDetails } from '../../registry/result-limits.js';
import type { Job, RunOptions, RunOutcome } from '../run-types.js';
import { CallEvents } from '../events.js';
import { DEFAULT_GRACE_MS, killProcessGroup } from './kill.js';
import { LineSplitter, encodeRequest, parseEnvelope, type Envelope } from './ndjson.js';
import { ByteBudget, TailBuffer } from './output-cap.js';
import { asTermination, elapsedMs, failRun, type TerminationReason } from './process-outcome.js';
import type { EgressGrant } from '../bwrap/egress-grant.js';
import { resolveSandboxArgv, sandboxSetupOf, withEgress, type EgressSettings } from './process-sandbox.js';
import { openWorkdir, spawnTool, type SpawnedTool, type ToolExit, type Workdir } from './spawn.js';
import { START_LINE } from '../bwrap/argv.js';
import type { ProcessSandboxServices } from './oneshot-sandboxes.js';
import { IgnoredOutputLog, MAX_UNSOLICITED_BYTES, newIdleBudget } from './unsolicited.js';

interface ProcessPoolDeps {
  readonly logger: Logger;
  readonly graceMs?: number;
  readonly bwrapPath?: string;
  /** The host's spawner, groups, cgroups and machine facts. */
  readonly services: ProcessSandboxServices;
  readonly egress?: EgressSettings;
}

/** A pool of persistent processes for one tool. */
export class ProcessPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: PendingCall[] = [];
  private startingCount = 0;
  /** Slots being started: close() waits for them, since they may spawn after it began. */
  private readonly startingSlots = new Set<Promise<void>>();
  private isClosed = false;
  private readonly ignoredLog: IgnoredOutputLog;
  // At least one process, whatever the spec says: a pool of none would only queue.
  private readonly poolSize: number;

  constructor(
    private readonly spec: RunSpec,
    private readonly deps: ProcessPoolDeps,
  ) {
    this.poolSize = Number.isFinite(spec.poolSize) ? Math.max(1, Math.floor(spec.poolSize)) : 1;
    this.ignoredLog = new IgnoredOutputLog(deps.logger, spec.name);
  }

  /** Queues one call; settles once it has an answer or its process is gone. */
  run(job: Job, options: RunOptions): Promise<RunOutcome> {
    const startedMs = performance.now();
    const { control } = options;
    if (control.reason !== undefined || this.isClosed) return Promise.resolve(failRun(this.isClosed ? 'cancelled' : asTermination(control.reason ?? 'cancelled'), {}, startedMs));
    return new Promise<RunOutcome>((resolve) => {
      const call: PendingCall = { job, options, startedMs, resolve, isSettled: false, unregister: () => {}, resumeDeadline: undefined, events: undefined };
      // The control's deadline covers the wait in the queue for a busy process: it is the
      // call's wall-clock budget. A wait for a process being started does not count (SPEC
      // section 3): the deadline is held until the call is handed to a process.
      this.queue.push(call);
      call.unregister = control.onStop((reason) => this.expire(call, reason === 'timeout' ? 'timeout' : 'cancelled'));
      this.pump();
    });
  }

  /** Fails queued calls, kills every process and waits until they are gone. */
  async close(): Promise<void> {
    this.isClosed = true;
    for (const call of this.queue.splice(0)) settle(call, failRun('cancelled', {}, call.startedMs));
    await Promise.all([...this.startingSlots]);
    const slots = [...this.slots];
    for (const slot of slots) this.retire(slot, 'cancelled', {});
    await Promise.all(slots.map((slot) => slot.gone));
  }

  // Runs in the same turn as whatever freed a slot (an answer, a new process), so a
  // queued call's request is written at once, without waiting for another turn.
  private pump(): void {
    while (this.queue.length > 0) {
      const idle = this.idleSlot();
      if (idle === undefined) break;
      const call = this.queue.shift();
      if (call !== undefined) this.dispatch(idle, call);
    }
    // The first waiting call warms the whole pool.
    const wanted = this.queue.length === 0 ? 0 : this.poolSize - this.slots.size - this.startingCount;
    for (let i = 0; i < wanted; i++) this.startSlotTracked();
    this.holdDeadlines();
  }

  // The first `startingCount` queued calls wait for a process being started, which does not
  // count against their deadline (SPEC section 3); the others wait for a busy process, which
  // does. Re-judged whenever the queue or the starts change: a call whose process went to a
  // call ahead of it waits for a busy one from then on.
  private holdDeadlines(): void {
    for (let index = 0; index < this.queue.length; index++) {
      const call = this.queue[index] as PendingCall;
      const isWaitingForStart = index < this.startingCount;
      if (isWaitingForStart && call.resumeDeadline === undefined) call.resumeDeadline = call.options.control.pauseDeadline?.() ?? (() => {});
      else if (!isWaitingForStart && call.resumeDeadline !== undefined) {
        call.resumeDeadline();
        call.resumeDeadline = undefined;
      }
    }
  }

  // A plain loop over the few slots: no copy of the set on every call.
  private idleSlot(): Slot | undefined {
    for (const slot of this.slots) if (slot.call === undefined && !slot.isRetiring) return slot;
    return undefined;
  }

  private slotOf(call: PendingCall): Slot | undefined {
    for (const slot of this.slots) if (slot.call === call) return slot;
    return undefined;
  }

  private dispatch(slot: Slot, call: PendingCall): void {
    call.resumeDeadline?.();
    slot.call = call;
    slot.budget = slot.callBudget.reset();
    // One call at a time per process: its network attempts from now on are this call's.
    slot.egress?.attach(call.options.onEgress);
    slot.tool.stdin.write(encodeRequest(call.job.callId, call.job.args));
  }

  private expire(call: PendingCall, reason: 'timeout' | 'cancelled'): void {
    if (call.isSettled) return;
    const queuedAt = this.queue.indexOf(call);
    if (queuedAt !== -1) {
      this.queue.splice(queuedAt, 1);
      settle(call, failRun(reason, reason === 'timeout' ? { timeoutMs: call.options.control.timeoutMs } : {}, call.startedMs));
      return;
    }
    const slot = this.slotOf(call);
    if (slot !== undefined) this.retire(slot, reason, reason === 'timeout' ? { timeoutMs: call.options.control.timeoutMs } : {});
  }

  private startSlotTracked(): void {
    const starting = this.startSlot().finally(() => this.startingSlots.delete(starting));
    this.startingSlots.add(starting);
  }

  private async startSlot(): Promise<void> {
    this.startingCount++;
    let workdir: Workdir | undefined;
    try {
      workdir = await openWorkdir(this.spec);
      const sandbox = await resolveSandboxArgv(this.spec, {
        cwd: workdir.cwd,
        logger: this.deps.logger,
        ...(this.deps.bwrapPath !== undefined ? { bwrapPath: this.deps.bwrapPath } : {}),
        services: this.deps.services,
        ...(this.deps.egress !== undefined ? { egress: this.deps.egress } : {}),
      });
      if (!sandbox.ok || this.isClosed) {
        await workdir.dispose();
        if (!sandbox.ok) this.failQueued('sandbox_unavailable', { reason: sandbox.reason });
        return;
      }
      workdir = withEgress(workdir, sandbox.egress);
      const { cgroup } = sandbox;
      const oomKills = () => this.deps.services.cgroups.oomKills(cgroup);
      const tool = await spawnTool(sandbox.argv, this.spec.env, workdir.cwd, this.deps.services, sandboxSetupOf(sandbox.egress));
      const slot = this.watch(tool, workdir, sandbox.egress, oomKills);
      this.slots.add(slot);
      // Closed while it was starting: close() is waiting for it too (see startingSlots).
      if (this.isClosed) this.retire(slot, 'cancelled', {}, true);
      else slot.tool.stdin.write(START_LINE);
    } catch (error) {
      await workdir?.dispose();
      this.deps.logger.error({ tool: this.spec.name, err: error }, 'persistent process could not start');
      this.failQueued('internal', { reason: 'spawn_setup_failed' });
    } finally {
      this.startingCount--;
    }
    this.pump();
  }

  private watch(tool: SpawnedTool, workdir: Workdir, egress: EgressGrant | undefined, oomKills: () => Promise<number>): Slot {
    const lines = new LineSplitter(this.spec.floodCapBytes);
    const idleBudget = newIdleBudget();
    const slot: Slot = {
      tool,
      egress,
      isRetiring: false,
      call: undefined,
      budget: idleBudget,
      callBudget: new ByteBudget(this.spec.floodCapBytes),
      idleBudget,
      stderrTail: new TailBuffer(),
      reason: undefined,
      gone: tool.ended.then(async (exit) => {
        await slot.killing;
        const isOomKilled = (await oomKills()) > 0;
        this.slots.delete(slot);
        await workdir.dispose();
        this.onSlotEnded(slot, exit, isOomKilled);
      }),
      killing: undefined,
      answeredCount: 0,
    };
    tool.stdout.on('data', (chunk: Buffer) => {
      if (slot.isRetiring) return;
      if (!slot.budget.spend(chunk.length)) return this.retireForOutput(slot);
      const complete = lines.push(chunk);
      if (complete === 'overflow') return this.retireForOutput(slot);
      for (const line of complete) {
        if (slot.isRetiring) return;
        this.handleEnvelope(slot, parseEnvelope(line));
      }
    });
    tool.stderr.on('data', (chunk: Buffer) => {
      slot.stderrTail.push(chunk);
      if (!slot.isRetiring && !slot.budget.spend(chunk.length)) this.retireForOutput(slot);
    });
    return slot;
  }

  private handleEnvelope(slot: Slot, envelope: Envelope): void {
    if (envelope.kind === 'blank') return;
    if (envelope.kind === 'invalid') {
      this.deps.logger.warn({ tool: this.spec.name, reason: envelope.reason }, 'persistent process wrote an invalid line; replacing it');
      this.retire(slot, 'invalid_output', { reason: envelope.reason }, true);
      return;
    }
    const call = slot.call;
    if (call === undefined || envelope.id !== call.job.callId) {
      this.ignoredLog.note(envelope.kind);
      return;
    }
    if (envelope.kind === 'progress') {
      call.events ??= new CallEvents({ options: call.options, logger: this.deps.logger, facts: { tool: this.spec.name, callId: call.job.callId } });
      call.events.progress(envelope.progress);
      return;
    }
    slot.call = undefined;
    // Between calls the process gets a budget of its own, fresh for each gap (SPEC section 3.1).
    slot.budget = slot.idleBudget.reset();
    slot.egress?.detach();
    slot.answeredCount++;
    slot.stderrTail.clear();
    settle(
      call,
      envelope.kind === 'result'
        ? this.succeed(envelope.resultJson, envelope.result, call)
        : failRun('tool_error', { message: envelope.message }, call.startedMs, envelope.message),
    );
    this.pump();
  }

  // `result` is the value of `resultJson`, from the one parse of its line (ndjson.ts).
  private succeed(resultJson: string, result: unknown, call: PendingCall): RunOutcome {
    const durationMs = elapsedMs(call.startedMs);
    // A `stdout: text` tool answers with a JSON string: hand on its text as bytes.
    if (this.spec.stdout === 'text' && typeof result === 'string') {
      return { ok: true, output: { type: 'text', bytes: new TextEncoder().encode(result) }, durationMs };
    }
    // The supervisor still scans `resultJson` (depth, duplicate keys) before it uses `result`.
    return { ok: true, output: { type: 'json', json: resultJson, parsed: result }, durationMs };
  }

  private retireForOutput(slot: Slot): void {
    if (slot.call === undefined) {
      // Nobody is waiting: it is replaced (onSlotEnded), and said once, not per line.
      this.deps.logger.warn({ tool: this.spec.name, maxUnsolicitedBytes: MAX_UNSOLICITED_BYTES }, 'persistent process wrote too much between calls; replacing it');
    }
    this.retire(slot, 'output_limit', outputLimitDetails({ reason: 'flood_cap', limit: this.spec.floodCapBytes }), true);
  }

  // Kills the slot's whole pid namespace; its call (if any) settles once the process is gone.
  private retire(slot: Slot, reason: TerminationReason, details: Record<string, unknown>, now = false): void {
    if (slot.isRetiring) return;
    slot.isRetiring = true;
    slot.reason = { reason, details };
    if (now) {
      slot.tool.stdout.destroy();
      slot.tool.stderr.destroy();
    }
    if (slot.tool.pid === undefined) return;
    slot.killing = killProcessGroup(slot.tool.pid, now ? 0 : (this.deps.graceMs ?? DEFAULT_GRACE_MS), {
      exited: slot.tool.ended,
      spareLeaderFromTerm: !now,
      groups: this.deps.services.groups,
    });
  }

  private onSlotEnded(slot: Slot, exit: ToolExit, isOomKilled: boolean): void {
    const call = slot.call;
    if (call !== undefined) {
      if (slot.reason !== undefined) {
        settle(call, failRun(slot.reason.reason, slot.reason.details, call.startedMs));
      } else if (isOomKilled) {
        // The kernel killed it (or a process of its sandbox) at its memory cgroup's limit.
        settle(call, failRun('memory_limit', { memoryMb: this.spec.memoryMb, reason: 'cgroup_oom', stderrTail: slot.stderrTail.toText() }, call.startedMs));
      } else if (exit.kind === 'spawn_failed') {
        settle(call, failRun('sandbox_unavailable', { reason: 'spawn_failed', errno: exit.errorCode }, call.startedMs));
      } else {
        // A persistent process that ends during a call crashed, whatever its exit code.
        settle(call, failRun('tool_crashed', { exitCode: exit.exitCode, signal: exit.signal, stderrTail: slot.stderrTail.toText() }, call.startedMs));
      }
    }
    if (this.isClosed) return;
    // Replace at once a process we killed or one that had been answering, so the pool
    // stays warm; one that died before its first answer only on demand (no respawn loop).
    const isWorthReplacing = slot.reason !== undefined || slot.answeredCount > 0;
    if (isWorthReplacing && this.slots.size + this.startingCount < this.poolSize) this.startSlotTracked();
    this.pump();
  }

  private failQueued(code: 'sandbox_unavailable' | 'internal', details: Record<string, unknown>): void {
    for (const call of this.queue.splice(0)) settle(call, failRun(code, details, call.startedMs));
  }
}

interface PendingCall {
  readonly job: Job;
  readonly options: RunOptions;
  readonly startedMs: number;
  readonly resolve: (outcome: RunOutcome) => void;
  isSettled: boolean;
  /** Lets go of the call's control once the call is settled. */
  unregister: () => void;
  /** Set while the call's deadline is held for a process being started. */
  resumeDeadline: (() => void) | undefined;
  /** Its progress, bounded per call; made at its first progress line (most calls send none). */
  events: CallEvents | undefined;
}

interface Slot {
  readonly tool: SpawnedTool;
  readonly egress: EgressGrant | undefined;
  readonly stderrTail: TailBuffer;
  /** Settles when the process is gone and its workdir removed. */
  readonly gone: Promise<void>;
  call: PendingCall | undefined;
  /** The running call's output budget, or between calls the budget for unsolicited output. */
  budget: ByteBudget;
  /** The two budgets `budget` switches between, reset at each switch rather than rebuilt. */
  readonly callBudget: ByteBudget;
  readonly idleBudget: ByteBudget;
  isRetiring: boolean;
  reason: { reason: TerminationReason; details: Record<string, unknown> } | undefined;
  killing: Promise<void> | undefined;
  answeredCount: number;
}

function settle(call: PendingCall, outcome: RunOutcome): void {
  if (call.isSettled) return;
  call.isSettled = true;
  call.resumeDeadline?.();
  call.unregister();
  call.resolve(outcome);
}
