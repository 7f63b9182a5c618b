// One upstream server profile of a host (server × read_only/declared): starts
// its instance on first use, hands the running one to every call, and starts a
// fresh one after it died. A server that keeps failing to start is not retried
// on every call: after each failure the next try waits longer (backoff), and
// meanwhile calls fail `sandbox_unavailable` naming the last reason.
import type { Logger } from '../../log.js';
import type { EgressSettings, SandboxedSpawnServices } from '../process/process-sandbox.js';
import { ServerInstance, type InstanceSpec, type StartResult } from './server-instance.js';

export interface SlotDeps {
  readonly logger: Logger;
  /** The host's spawner, groups, cgroups and machine facts, which its servers are started through. */
  readonly services: SandboxedSpawnServices;
  readonly graceMs?: number;
  readonly bwrapPath?: string;
  readonly egress?: EgressSettings;
  /** Redacts and cuts what a server logs before the host's log gets it. */
  readonly redactLog?: (text: string, maxChars: number) => string;
  /** Clock for backoff (tests); default Date.now. */
  readonly now?: () => number;
}

/** First wait after a failed start, doubled per failure up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;

export type Acquired =
  | { readonly ok: true; readonly instance: ServerInstance }
  | { readonly ok: false; readonly reason: string; readonly retryAfterMs: number; readonly stderrLines?: readonly string[] };

/** Why a server did not start: the reason and the last lines of its stderr (redacted, bounded). */
export interface StartFailure {
  readonly reason: string;
  readonly stderrLines?: readonly string[];
}

export class ServerSlot {
  #starting: Promise<StartResult> | undefined;
  #instance: ServerInstance | undefined;
  #failures = 0;
  #retryAtMs = 0;
  #lastReason = '';
  #lastStderrLines: readonly string[] | undefined;
  #isClosed = false;
  /** Called when the running instance says its tools changed. */
  onToolsChanged: (() => void) | undefined;
  /** Called when an instance started after the server had failed to start (its tools may be listed now). */
  onRecovered: (() => void) | undefined;

  constructor(
    readonly spec: InstanceSpec,
    private readonly deps: SlotDeps,
    /** An instance already running for this profile (the one that listed the server). */
    initial?: ServerInstance,
    /** The server already failed to start (its listing did): the backoff runs from now. */
    failure?: StartFailure,
  ) {
    if (initial) this.#use(initial);
    else if (failure) this.#noteFailure(failure);
  }

  /** True while an instance runs: acquire() answers at once, nothing is started. */
  get isRunning(): boolean {
    return this.#instance?.isAlive === true;
  }

  /** The running instance, if there is one now (nothing is started). */
  get running(): ServerInstance | undefined {
    return this.#instance?.isAlive ? this.#instance : undefined;
  }

  /** The running instance, started (or restarted) when needed. */
  async acquire(): Promise<Acquired> {
    if (this.#isClosed) return { ok: false, reason: 'the host is shutting down', retryAfterMs: 0 };
    if (this.#instance?.isAlive) return { ok: true, instance: this.#instance };
    const now = (this.deps.now ?? Date.now)();
    if (this.#starting === undefined && this.#failures > 0 && now < this.#retryAtMs) return this.#unavailable(now);
    this.#starting ??= this.#start();
    const started = await this.#starting;
    if (started.ok) return { ok: true, instance: started.instance };
    return this.#unavailable((this.deps.now ?? Date.now)());
  }

  /** Kills the instance and refuses further calls. */
  async close(): Promise<void> {
    this.#isClosed = true;
    const starting = this.#starting;
    if (starting) {
      const started = await starting;
      if (started.ok) await started.instance.killAndWait();
    }
    if (this.#instance) await this.#instance.killAndWait();
  }

  #use(instance: ServerInstance): void {
    this.#instance = instance;
    instance.onToolsChanged = () => this.onToolsChanged?.();
    void instance.gone.then((end) => {
      if (end.reason !== 'killed') this.deps.logger.warn({ server: this.spec.run.name, ...end }, 'upstream server ended; the next call starts a fresh one');
    });
  }

  #unavailable(nowMs: number): Acquired {
    return {
      ok: false,
      reason: this.#lastReason,
      retryAfterMs: Math.max(0, this.#retryAtMs - nowMs),
      ...(this.#lastStderrLines !== undefined ? { stderrLines: this.#lastStderrLines } : {}),
    };
  }

  #noteFailure(failure: StartFailure): void {
    this.#failures++;
    this.#lastReason = failure.reason;
    this.#lastStderrLines = failure.stderrLines;
    this.#retryAtMs = (this.deps.now ?? Date.now)() + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.#failures - 1));
  }

  async #start(): Promise<StartResult> {
    const logger = this.deps.logger;
    try {
      const started = await ServerInstance.start(this.spec, this.deps);
      if (!started.ok) {
        this.#noteFailure(started);
        logger.warn({ server: this.spec.run.name, failures: this.#failures, reason: started.reason }, 'upstream server could not start');
        return started;
      }
      if (this.#isClosed) {
        await started.instance.killAndWait();
        return { ok: false, reason: 'the host is shutting down' };
      }
      const hadFailed = this.#failures > 0;
      this.#failures = 0;
      this.#lastStderrLines = undefined;
      this.#use(started.instance);
      if (hadFailed) this.onRecovered?.();
      return started;
    } finally {
      this.#starting = undefined;
    }
  }
}
