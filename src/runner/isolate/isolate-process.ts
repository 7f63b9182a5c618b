// The host's side of one live isolate process (sandbox/isolate/isolate-process.mjs,
// started by isolate-launch.ts): the frames it sends turned into its calls'
// outcomes and events, and its life (stop, kill, exit) turned into theirs.
// Nothing from there is trusted: frames are bounded before they are buffered,
// every field is checked, each call's messages are counted and bounded again,
// a frame for a call that has ended is dropped (counted in the log, never a
// reason to kill the process, which other calls of the tool share), and a
// process that breaks the protocol is killed. A process that dies fails only
// its own calls; the runner starts the next one. A tool with a network allow
// list has an egress grant with the process (closed with it): ctx.fetch goes
// out from over there through that grant's proxy, each call on a channel of its
// own (token, counts, budget), so the host serves no fetch.
import { recordStageTime, stageTimesOn } from '../../diagnostics/stage-times.js';
import type { Logger } from '../../log.js';
import { FrameReader, encodeFrame } from '../../../sandbox/shared/frames.mjs';
import { ISOLATE_WIRE_LIMITS } from '../../../sandbox/shared/limits.mjs';
import type { HostToIsolateMessage, IsolateEgressMessage, IsolateResultMessage } from '../../../sandbox/shared/messages.mjs';
import { readIsolateMessage } from '../../../sandbox/shared/readers.mjs';
import type { EgressCallChannel, EgressGrant } from '../bwrap/egress-grant.js';
import { CallEvents } from '../events.js';
import { killProcessGroupNow } from '../process/kill.js';
import { TailBuffer } from '../process/output-cap.js';
import type { SpawnedTool, Workdir } from '../process/spawn.js';
import type { Job, RunOptions } from '../run-types.js';
import { failure, type Outcome } from '../tool-envelope.js';
import type { RunSpec } from '../types.js';
import { crashOutcome, exitSignal, type ProcessExit } from './isolate-exit.js';
import { readIsolateResult } from './isolate-result.js';
import { topLevelVerdict, type IsolateStartResult, type IsolateStartStage } from './isolate-start.js';
import { LateFrames } from './late-frames.js';

/** How long a stopped call's isolate may take to be disposed before the whole process is killed. */
const STOP_GRACE_MS = 1000;
const STDERR_TAIL_BYTES = 4096;

interface ActiveCall {
  readonly options: RunOptions;
  readonly resolve: (outcome: Outcome) => void;
  /** Its progress, log and denial events, bounded per call as over there. */
  readonly events: CallEvents;
  /** Fetches refused over there before any connection, counted against the same bound as denials. */
  attempts: number;
  /** Its way out through the process's egress grant; closed when the call settles. */
  readonly egress: EgressCallChannel | undefined;
  /** When its run frame was sent, while stage times are recorded (the bench); else 0. */
  readonly sentMs: number;
}

/** One live isolate process and its calls. */
export class IsolateProcess {
  private readonly calls = new Map<number, ActiveCall>();
  private readonly stopTimers = new Map<number, NodeJS.Timeout>();
  /** Waiting for every stop asked of the process to be over (stopsSettled). */
  private stopWaiters: Array<() => void> = [];
  private nextId = 1;
  private readonly lateFrames: LateFrames;
  private hasExited = false;
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
      if (this.calls.size > 0 || stderr !== '') {
        this.logger.warn({ tool: spec.name, exit, stderr: stderr.slice(-2000) }, 'isolate process ended');
      }
      this.markReady(this.startFailure(exit.kind === 'exited' ? exit : undefined, stderr));
      for (const timer of this.stopTimers.values()) clearTimeout(timer);
      this.stopTimers.clear();
      this.noteStopOver();
      const crashed = isOomKilled
        ? failure('memory_limit', 'The isolate process this call ran in went over its memory limit and was stopped.', { memoryMb: this.spec.memoryMb, reason: 'cgroup_oom' })
        : this.crashOutcome(exit.kind === 'exited' ? exit : undefined, stderr);
      for (const call of this.calls.values()) this.settle(call, crashed);
      this.calls.clear();
      await Promise.all([workdir.dispose().catch(() => undefined), grant?.close()]);
    });
  }

  get isAlive(): boolean {
    return !this.hasExited && this.brokenReason === undefined;
  }

  /**
   * Whether a stopped call's isolate has not been reported disposed yet: until it is, the
   * process may be wedged (isolated-vm holding its thread), and it is killed with whatever
   * runs in it if the report does not come within STOP_GRACE_MS.
   */
  get isStopping(): boolean {
    return this.stopTimers.size > 0;
  }

  /** Settles once no stop is pending: each reported done, or the process killed or gone. */
  stopsSettled(): Promise<void> {
    if (!this.isStopping) return Promise.resolve();
    return new Promise((resolve) => this.stopWaiters.push(resolve));
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
        sentMs: stageTimesOn() ? performance.now() : 0,
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
      if (this.calls.has(id)) {
        this.send({
          type: 'run',
          id,
          callId: job.callId,
          args: job.args,
          timeoutMs,
          ...(egress !== undefined ? { egressToken: egress.token } : {}),
          ...(call.sentMs !== 0 ? { sentAtUs: monotonicUs() } : {}),
        });
      }
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
      this.noteStopOver();
    }, STOP_GRACE_MS);
    timer.unref();
    this.stopTimers.set(id, timer);
  }

  private noteStopOver(): void {
    if (this.isStopping) return;
    for (const resolve of this.stopWaiters.splice(0)) resolve();
  }

  private settle(call: ActiveCall, outcome: Outcome): void {
    // The call is over: its token is refused from now on and its connections are cut.
    call.egress?.close();
    call.resolve(outcome);
  }

  // The process ended before it was ready: while loading our code, the sandbox could not start;
  // while the tool's top level ran ahead (no call in it yet), the tool ended it.
  private startFailure(exit: ProcessExit | undefined, stderr: string): IsolateStartResult {
    const reason = `the isolate process exited while starting${stderr === '' ? '' : `: ${stderr.slice(-500)}`}`;
    if (this.startStage !== 'top_level') return { ok: false, reason };
    const verdict = topLevelVerdict({ stderr, signal: exitSignal(exit), killedByHost: this.killedByHost, memoryMb: this.spec.memoryMb });
    return { ok: false, reason: verdict.message, verdict };
  }

  private crashOutcome(exit: ProcessExit | undefined, stderr?: string): Outcome {
    return crashOutcome({ brokenReason: this.brokenReason, memoryMb: this.spec.memoryMb, ...(stderr !== undefined ? { stderr } : {}) }, exit);
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
      case 'stopped':
        clearTimeout(this.stopTimers.get(message.id));
        this.stopTimers.delete(message.id);
        this.noteStopOver();
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
        if (call.sentMs !== 0) this.recordStageTimes(call, message);
        this.settle(
          call,
          readIsolateResult(message, body, {
            tool: this.spec.name,
            memoryMb: this.spec.memoryMb,
            floodCapBytes: this.spec.floodCapBytes,
            timeoutMs: call.options.control.timeoutMs,
            logger: this.logger,
          }),
        );
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

  /**
   * Where a call's time went between its run frame and its result (the bench's stage
   * times): the run frame's way there (`isolate:inbound`: the pipe, the decoding, a busy
   * event loop there), over there to a context, in the run, encoding the result, and the
   * result's way back (`isolate:outbound`), both ends on the machine's monotonic clock.
   */
  private recordStageTimes(call: ActiveCall, message: IsolateResultMessage): void {
    const roundTripMs = performance.now() - call.sentMs;
    recordStageTime(this.spec.name, 'isolate:round-trip', roundTripMs);
    const times = message.kind === 'envelope' ? message.times : undefined;
    if (times === undefined) return;
    recordStageTime(this.spec.name, 'isolate:slot', times.slotUs / 1000);
    recordStageTime(this.spec.name, 'isolate:run', times.runUs / 1000);
    recordStageTime(this.spec.name, 'isolate:encode', times.encodeUs / 1000);
    recordStageTime(this.spec.name, 'isolate:inbound', times.inboundUs / 1000);
    recordStageTime(this.spec.name, 'isolate:outbound', (monotonicUs() - times.sentAtUs) / 1000);
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

/** Now on the machine's monotonic clock, in µs: the isolate process reads the same clock. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
