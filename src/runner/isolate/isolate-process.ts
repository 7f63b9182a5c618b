// The host's side of one isolate process (sandbox/isolate/isolate-process.mjs): starts
// it in its sandbox through the spawner, speaks frames with it, and turns what
// comes back into outcomes. Nothing from there is trusted: frames are bounded
// before they are buffered, every field is checked, each call's messages are
// counted and bounded again, a frame for a call that has ended is dropped
// (counted in the log, never a reason to kill the process, which other calls
// of the tool share), and a process that breaks the protocol is killed. A process
// that dies fails only its own calls; the runner starts the next one. A tool
// with a network allow list gets an egress grant with the process (closed with
// it): ctx.fetch goes out from over there through that grant's proxy, each call
// on a channel of its own (token, counts, budget), so the host serves no fetch.
import type { Logger } from '../../log.js';
import { FrameReader, encodeFrame } from '../../../sandbox/shared/frames.mjs';
import { START_LINE } from '../bwrap/argv.js';
import { killProcessGroupNow } from '../process/kill.js';
import { TailBuffer } from '../process/output-cap.js';
import { openWorkdir, spawnTool, type SpawnedTool, type Workdir } from '../process/spawn.js';
import type { SandboxedSpawnServices } from '../process/process-sandbox.js';
import type { RunSpec } from '../types.js';
import { failure, MAX_TOOL_MESSAGE_CHARS, parseToolEnvelope, type Outcome } from '../tool-envelope.js';
import { ISOLATE_WIRE_LIMITS } from '../../../sandbox/shared/limits.mjs';
import type { HostToIsolateMessage, IsolateEgressMessage, IsolateResultMessage } from '../../../sandbox/shared/messages.mjs';
import { readIsolateMessage } from '../../../sandbox/shared/readers.mjs';
import type { Job, RunOptions } from '../run-types.js';
import { CallEvents } from '../events.js';
import { openEgressGrant, type EgressCallChannel, type EgressGrant } from '../bwrap/egress-grant.js';
import { SANDBOX_PROXY_URL } from '../bwrap/egress-bridge.js';
import type { EgressSettings } from '../process/process-sandbox.js';
import { classifyIsolateError, isIvmFailure, isToolMemoryError, type HostDisposeReason } from './isolate-errors.js';
import { LateFrames } from './late-frames.js';
import { topLevelVerdict, type IsolateStartResult, type IsolateStartStage } from './isolate-start.js';
import { MAX_ISOLATES_PER_PROCESS, PRELUDE_URL, resolveIsolatedVm, resolveIsolateSandbox } from './isolate-sandbox.js';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

/** How long a process may take to start and prepare its first context. */
export const ISOLATE_START_TIMEOUT_MS = 20_000;
/** How long a stopped call's isolate may take to be disposed before the whole process is killed. */
export const STOP_GRACE_MS = 1000;
const STDERR_TAIL_BYTES = 4096;

/** A started process, or why not (`verdict`: the tool's module made the start fail; see isolate-start.ts). */
export type IsolateProcessStart = { readonly ok: true; readonly process: IsolateProcess } | Extract<IsolateStartResult, { ok: false }>;

export interface IsolateProcessDeps {
  readonly logger: Logger;
  readonly bwrapPath?: string;
  /** The host's spawner, groups, cgroups and machine facts. */
  readonly services: IsolateSandboxServices;
  /** Tools with a network allow list: their egress proxy's limits and resolver. */
  readonly egress?: EgressSettings;
}

/** What starting an isolate process goes through (a host's ProcessServices). */
export type IsolateSandboxServices = SandboxedSpawnServices;

/** Starts an isolate process for `spec` and waits until its first context is ready. */
export async function startIsolateProcess(spec: RunSpec, deps: IsolateProcessDeps): Promise<IsolateProcessStart> {
  if (spec.entryPath === undefined) return { ok: false, reason: `isolate tool ${spec.name} has no entry` };
  const workdir = await openWorkdir(spec);
  let tool: SpawnedTool | undefined;
  let grant: EgressGrant | undefined;
  try {
    if (spec.networkAllow.length > 0) {
      try {
        grant = await openEgressGrant({
          allow: spec.networkAllow,
          readOnly: spec.sideEffect === 'read_only',
          logger: deps.logger,
          perCall: true,
          ...(deps.egress?.limits === undefined ? {} : { limits: deps.egress.limits }),
          ...(deps.egress?.resolve === undefined ? {} : { resolve: deps.egress.resolve }),
        });
      } catch (error) {
        await workdir.dispose();
        return { ok: false, reason: `the egress proxy could not start: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    const sandbox = await resolveIsolateSandbox(spec, {
      cwd: workdir.cwd,
      services: deps.services,
      ...(deps.bwrapPath !== undefined ? { bwrapPath: deps.bwrapPath } : {}),
      ...(grant !== undefined ? { egress: grant } : {}),
    });
    if (!sandbox.ok) {
      await Promise.all([workdir.dispose(), grant?.close()]);
      return { ok: false, reason: sandbox.reason };
    }
    tool = await spawnTool(sandbox.argv, sandbox.env, workdir.cwd, deps.services);
    if (tool.pid === undefined) {
      await Promise.all([workdir.dispose(), grant?.close()]);
      const exit = await tool.exited;
      return { ok: false, reason: `the isolate process could not be spawned (${exit.kind === 'spawn_failed' ? exit.errorCode : 'exited'})` };
    }
    const { cgroup } = sandbox;
    const started = new IsolateProcess(spec, tool, workdir, deps.logger, grant, () => deps.services.cgroups.oomKills(cgroup));
    const init: HostToIsolateMessage = {
      type: 'init',
      toolName: spec.name,
      ivmPath: resolveIsolatedVm(),
      entryPath: spec.entryPath,
      preludePath: fileURLToPath(PRELUDE_URL),
      memoryMb: spec.memoryMb,
      floodCapBytes: spec.floodCapBytes,
      maxIsolates: MAX_ISOLATES_PER_PROCESS,
      roots: spec.roots.map((root) => ({ path: root.path, access: root.access })),
      protectedPaths: [...(spec.protectedPaths ?? [])],
      hiddenPaths: [...(spec.hiddenPaths ?? [])],
      ...(spec.sideEffect !== undefined ? { sideEffect: spec.sideEffect } : {}),
      ...(grant !== undefined ? { egress: { proxyUrl: SANDBOX_PROXY_URL, allow: [...spec.networkAllow] } } : {}),
    };
    tool.stdin.write(START_LINE);
    tool.stdin.write(encodeFrame(init));
    const ready = await started.whenReady(ISOLATE_START_TIMEOUT_MS);
    if (!ready.ok) {
      started.kill();
      return ready;
    }
    return { ok: true, process: started };
  } catch (error) {
    if (tool?.pid !== undefined) killProcessGroupNow(tool.pid);
    await Promise.all([workdir.dispose(), grant?.close()]);
    throw error;
  }
}

interface ActiveCall {
  readonly options: RunOptions;
  readonly resolve: (outcome: Outcome) => void;
  /** Its progress, log and denial events, bounded per call as over there. */
  readonly events: CallEvents;
  /** Fetches refused over there before any connection, counted against the same bound as denials. */
  attempts: number;
  /** Its way out through the process's egress grant; closed when the call settles. */
  readonly egress: EgressCallChannel | undefined;
}

/** One live isolate process and its calls. */
export class IsolateProcess {
  private readonly calls = new Map<number, ActiveCall>();
  private readonly stopTimers = new Map<number, NodeJS.Timeout>();
  private nextId = 1;
  private readonly lateFrames: LateFrames;
  private hasExited = false;
  private catastrophe: string | undefined;
  private brokenReason: string | undefined;
  private startStage: IsolateStartStage = 'loading';
  private killedByHost = false;
  private readonly stderrTail = new TailBuffer(STDERR_TAIL_BYTES);
  private markReady: (result: IsolateStartResult) => void = () => undefined;
  private readonly ready: Promise<IsolateStartResult>;
  /** Settles once the process has exited and its workdir is gone. */
  readonly exited: Promise<void>;

  constructor(
    private readonly spec: RunSpec,
    private readonly tool: SpawnedTool,
    workdir: Workdir,
    private readonly logger: Logger,
    private readonly grant?: EgressGrant,
    /** OOM kills in the process's memory cgroup: one means the kernel ended it at its memory limit. */
    private readonly oomKills: () => Promise<number> = () => Promise.resolve(0),
  ) {
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    this.lateFrames = new LateFrames(logger, spec.name);
    const maxHeaderBytes = ISOLATE_WIRE_LIMITS.maxHeaderBytes;
    // The largest body is a result (floodCapBytes).
    const maxFrameBytes = 8 + maxHeaderBytes + spec.floodCapBytes;
    const reader = new FrameReader({
      maxFrameBytes,
      maxHeaderBytes,
      onFrame: (header: unknown, body: Buffer) => this.onFrame(header, body),
      onError: (reason: string) => this.breakProtocol(`unreadable frame (${reason})`),
    });
    tool.stdout.on('data', (chunk: Buffer) => reader.push(chunk));
    tool.stderr.on('data', (chunk: Buffer) => this.stderrTail.push(chunk));
    this.exited = tool.ended.then(async (exit) => {
      this.hasExited = true;
      const isOomKilled = (await this.oomKills()) > 0;
      this.lateFrames.flush();
      const stderr = this.stderrTail.toText().trim();
      if (this.calls.size > 0 || stderr !== '' || this.catastrophe !== undefined) {
        this.logger.warn({ tool: spec.name, exit, catastrophe: this.catastrophe, stderr: stderr.slice(-2000) }, 'isolate process ended');
      }
      this.markReady(this.startFailure(exit.kind === 'exited' ? exit : undefined, stderr));
      for (const timer of this.stopTimers.values()) clearTimeout(timer);
      this.stopTimers.clear();
      const crashed = isOomKilled
        ? failure('memory_limit', 'The isolate process this call ran in went over its memory limit and was stopped.', { memoryMb: this.spec.memoryMb, reason: 'cgroup_oom' })
        : this.crashOutcome(exit.kind === 'exited' ? exit : undefined);
      for (const call of this.calls.values()) this.settle(call, crashed);
      this.calls.clear();
      await Promise.all([workdir.dispose().catch(() => undefined), grant?.close()]);
    });
  }

  get isAlive(): boolean {
    return !this.hasExited && this.brokenReason === undefined && this.catastrophe === undefined;
  }

  /** Calls running in this process now. */
  get inFlight(): number {
    return this.calls.size;
  }

  get pid(): number | undefined {
    return this.tool.pid;
  }

  whenReady(timeoutMs: number): Promise<IsolateStartResult> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<IsolateStartResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, reason: `the isolate process did not start within ${timeoutMs} ms` }), timeoutMs);
    });
    return Promise.race([this.ready, late]).finally(() => clearTimeout(timer));
  }

  /**
   * Runs one call there. Settles with the tool's outcome, or with `timeout` /
   * `cancelled` at the deadline or abort (the call's isolate is then disposed
   * over there, and the whole process killed if that does not happen in time).
   */
  run(job: Job, options: RunOptions, timeoutMs: number = options.control.timeoutMs): Promise<Outcome> {
    if (!this.isAlive) return Promise.resolve(this.crashOutcome(undefined));
    const { control } = options;
    const id = this.nextId++;
    return new Promise<Outcome>((resolve) => {
      let unregister: () => void = () => undefined;
      // Its own token at the proxy: this call's attempts, counts and budget, beside the others'.
      const egress = this.grant?.openCall(options.onEgress);
      const call: ActiveCall = {
        options,
        events: new CallEvents({ options, logger: this.logger, facts: { tool: this.spec.name } }),
        attempts: 0,
        egress,
        resolve: (outcome) => {
          unregister();
          resolve(outcome);
        },
      };
      this.calls.set(id, call);
      // The call's control decides when it stops (deadline, cancel, shutdown): its
      // answer goes at once, and the call's isolate is disposed over there.
      unregister = control.onStop(() => {
        if (!this.calls.has(id)) return;
        this.calls.delete(id);
        this.settle(call, { ok: false, ...control.failure() });
        this.requestStop(id);
      });
      if (this.calls.has(id)) this.send({ type: 'run', id, callId: job.callId, args: job.args, timeoutMs, ...(egress !== undefined ? { egressToken: egress.token } : {}) });
    });
  }

  /** Kills the process now (its sandbox, its pid namespace); its calls fail as crashed. */
  kill(): void {
    this.killedByHost = true;
    if (this.tool.pid !== undefined) killProcessGroupNow(this.tool.pid);
    this.tool.stdin.destroy();
  }

  /** Fails every running call with `outcome` and kills the process (runner closed). */
  abandon(outcome: Outcome): void {
    for (const call of this.calls.values()) this.settle(call, outcome);
    this.calls.clear();
    this.kill();
  }

  private send(message: HostToIsolateMessage, body?: string): void {
    if (this.hasExited) return;
    try {
      this.tool.stdin.write(encodeFrame(message, body));
    } catch {
      // The pipe is gone: the exit handler fails the calls.
    }
  }

  private requestStop(id: number): void {
    this.send({ type: 'stop', id });
    // A process that cannot even dispose an isolate in time is wedged: it goes.
    const timer = setTimeout(() => {
      this.stopTimers.delete(id);
      this.logger.warn({ tool: this.spec.name }, 'isolate process did not stop a call in time; killing it');
      this.brokenReason ??= 'stop_timeout';
      this.kill();
    }, STOP_GRACE_MS);
    timer.unref();
    this.stopTimers.set(id, timer);
  }

  private settle(call: ActiveCall, outcome: Outcome): void {
    // The call is over: its token is refused from now on and its connections are cut.
    call.egress?.close();
    call.resolve(outcome);
  }

  // The process ended before it was ready: while loading our code, the sandbox could not start;
  // while the tool's top level ran ahead (no call in it yet), the tool ended it.
  private startFailure(exit: { exitCode: number | null; signal: NodeJS.Signals | null } | undefined, stderr: string): IsolateStartResult {
    const reason = `the isolate process exited while starting${stderr === '' ? '' : `: ${stderr.slice(-500)}`}`;
    if (this.startStage !== 'top_level') return { ok: false, reason };
    const signal = exit?.signal ?? signalOfExitCode(exit?.exitCode ?? null);
    const verdict = topLevelVerdict({ catastrophe: this.catastrophe, stderr, signal, killedByHost: this.killedByHost, memoryMb: this.spec.memoryMb });
    return { ok: false, reason: verdict.message, verdict };
  }

  private crashOutcome(exit: { exitCode: number | null; signal: NodeJS.Signals | null } | undefined): Outcome {
    if (this.catastrophe !== undefined) {
      // isolated-vm's catastrophic errors are out-of-memory conditions V8 could not contain.
      if (/memory/i.test(this.catastrophe)) return failure('memory_limit', 'The tool exceeded its memory limit.', { memoryMb: this.spec.memoryMb, reason: 'catastrophic_oom' });
      return failure('tool_crashed', 'The tool crashed its isolate process.', { reason: 'isolate_catastrophe' });
    }
    if (this.brokenReason !== undefined) return failure('tool_crashed', 'The isolate process broke its protocol and was stopped.', { reason: this.brokenReason });
    // bubblewrap reports a command killed by a signal as exit code 128 + the signal.
    const signal = exit?.signal ?? signalOfExitCode(exit?.exitCode ?? null);
    return failure('tool_crashed', 'The tool crashed its isolate process.', {
      reason: 'isolate_process_exited',
      ...(signal !== undefined ? { signal } : exit?.exitCode !== null && exit?.exitCode !== undefined ? { exitCode: exit.exitCode } : {}),
    });
  }

  private breakProtocol(reason: string): void {
    if (this.brokenReason !== undefined) return;
    this.brokenReason = 'protocol_violation';
    this.logger.error({ tool: this.spec.name, reason }, 'isolate process broke the protocol; killing it');
    const outcome = this.crashOutcome(undefined);
    for (const call of this.calls.values()) this.settle(call, outcome);
    this.calls.clear();
    this.kill();
  }

  private onFrame(header: unknown, body: Buffer): void {
    const message = readIsolateMessage(header);
    switch (message.type) {
      case 'violation':
        return this.breakProtocol(message.reason);
      case 'loaded':
        if (this.startStage === 'loading') this.startStage = 'top_level';
        return;
      case 'ready':
        this.startStage = 'ready';
        return this.markReady({ ok: true });
      case 'start_failed':
        return this.markReady({ ok: false, reason: message.reason.slice(0, 200) || 'the isolate process could not start' });
      case 'catastrophe':
        return this.onCatastrophe(message.message, message.id);
      case 'stopped':
        clearTimeout(this.stopTimers.get(message.id));
        this.stopTimers.delete(message.id);
        return;
      default:
        break;
    }
    // Every other message belongs to a call this host started: an id it never gave out breaks the protocol.
    if (message.id >= this.nextId) return this.breakProtocol('a message for a call that was never started');
    const call = this.calls.get(message.id);
    if (call === undefined) {
      // The call has ended (answered, stopped): the frame is dropped and counted, nothing else.
      this.lateFrames.note(message.type);
      return;
    }
    switch (message.type) {
      case 'result':
        this.calls.delete(message.id);
        this.settle(call, this.readResult(message, body, call.options.control.timeoutMs));
        return;
      case 'progress':
        call.events.progress(message);
        return;
      case 'log':
        call.events.log(message.level, message.message);
        return;
      case 'denied':
        call.events.denied(message);
        return;
      case 'egress':
        this.forwardAttempt(call, message);
        return;
    }
  }

  // V8 lost control of an isolate there: the process is finished. The call whose isolate
  // it was gets the verdict; the others in that process are crashed bystanders.
  private onCatastrophe(message: string, culprit: number | undefined): void {
    if (this.catastrophe !== undefined) return;
    this.catastrophe = message.slice(0, 200) || 'unknown';
    this.logger.warn({ tool: this.spec.name, catastrophe: this.catastrophe }, 'isolated-vm catastrophic error in an isolate process; replacing it');
    for (const [id, call] of this.calls) {
      this.settle(
        call,
        id === culprit ? this.crashOutcome(undefined) : failure('tool_crashed', 'Another call crashed the isolate process this call ran in.', { reason: 'isolate_catastrophe' }),
      );
    }
    this.calls.clear();
    this.kill();
  }

  private readResult(message: IsolateResultMessage, body: Buffer, timeoutMs: number): Outcome {
    const rules = {
      source: 'isolate' as const,
      floodCapBytes: this.spec.floodCapBytes,
      checkOutputBytes: true,
      memoryLimit: { memoryMb: this.spec.memoryMb, isMemoryError: isToolMemoryError },
    };
    switch (message.kind) {
      case 'envelope':
        // A success's JSON is the body, already bounded over there and counted again here.
        if (message.envelope['ok'] === true) return parseToolEnvelope({ ok: true, json: body.toString('utf8') }, rules);
        return parseToolEnvelope(message.envelope, rules);
      case 'load_error':
        return failure('tool_error', message.message.slice(0, MAX_TOOL_MESSAGE_CHARS) || 'The tool module could not be loaded.', { reason: 'load_failed' });
      case 'ivm_error': {
        const text = message.message.slice(0, ISOLATE_WIRE_LIMITS.maxIvmMessageChars);
        if (message.stage === 'evaluate' && !isIvmFailure(new Error(text))) {
          return failure('tool_error', `the tool module threw while loading: ${text}`.slice(0, MAX_TOOL_MESSAGE_CHARS), { reason: 'load_failed' });
        }
        const classified = classifyIsolateError(new Error(text), {
          isolateDisposed: message.isolateDisposed,
          ...(message.hostDisposeReason !== undefined ? { hostDisposeReason: message.hostDisposeReason } : {}),
          memoryMb: this.spec.memoryMb,
          timeoutMs,
        });
        if (classified.code === 'internal') this.logger.error({ tool: this.spec.name, ivm: text }, 'unexpected isolated-vm failure');
        return { ok: false, ...classified };
      }
    }
  }

  // A fetch refused over there by name: one refused attempt of the call (bounded again here).
  private forwardAttempt(call: ActiveCall, message: IsolateEgressMessage): void {
    if (call.attempts >= ISOLATE_WIRE_LIMITS.maxDenialsPerCall) return;
    call.attempts += 1;
    const { port, method } = message;
    call.options.onEgress?.({
      kind: 'fetch',
      host: message.host.slice(0, 256),
      port: typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65535 ? port : null,
      method: method === null ? null : method.slice(0, 16),
      admitted: false,
      reason: message.reason.slice(0, ISOLATE_WIRE_LIMITS.maxCodeChars) || 'refused',
      address: null,
    });
  }
}

function signalOfExitCode(exitCode: number | null): NodeJS.Signals | undefined {
  if (exitCode === null || exitCode <= 128 || exitCode > 128 + 64) return undefined;
  return (Object.entries(constants.signals) as Array<[NodeJS.Signals, number]>).find(([, number]) => number === exitCode - 128)?.[0];
}
