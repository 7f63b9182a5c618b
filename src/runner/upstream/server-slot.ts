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
export const FIRST_BACKOFF_MS = 1_000;
export const MAX_BACKOFF_MS = 60_000;

export type Acquired =
  | { readonly ok: true; readonly instance: ServerInstance }
  | { readonly ok: false; readonly reason: string; readonly retryAfterMs: number; readonly stderrLines?: readonly string[] };

export class ServerSlot {
  #starting: Promise<StartResult> | undefined;
  #instance: ServerInstance | undefined;
  #failures = 0;
  #retryAtMs = 0;
  #lastReason = '';
  #lastStderrLines: readonly string[] = [];
  #isClosed = false;
  /** Called when the running instance says its tools changed. */
  onToolsChanged: (() => void) | undefined;

  constructor(
    readonly spec: InstanceSpec,
    private readonly deps: SlotDeps,
    /** An instance already running for this profile (the one that listed the server). */
    initial?: ServerInstance,
  ) {
    if (initial) this.#use(initial);
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
    if (this.#starting === undefined && this.#failures > 0 && now < this.#retryAtMs) {
      return { ok: false, reason: this.#lastReason, retryAfterMs: this.#retryAtMs - now, stderrLines: this.#lastStderrLines };
    }
    this.#starting ??= this.#start();
    const started = await this.#starting;
    if (started.ok) return { ok: true, instance: started.instance };
    return { ok: false, reason: started.reason, retryAfterMs: Math.max(0, this.#retryAtMs - (this.deps.now ?? Date.now)()), ...(started.stderrLines ? { stderrLines: started.stderrLines } : {}) };
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

  async #start(): Promise<StartResult> {
    const logger = this.deps.logger;
    try {
      const started = await ServerInstance.start(this.spec, this.deps);
      if (!started.ok) {
        this.#failures++;
        this.#lastReason = started.reason;
        this.#lastStderrLines = started.stderrLines ?? [];
        this.#retryAtMs = (this.deps.now ?? Date.now)() + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.#failures - 1));
        logger.warn({ server: this.spec.run.name, failures: this.#failures, reason: started.reason }, 'upstream server could not start');
        return started;
      }
      if (this.#isClosed) {
        await started.instance.killAndWait();
        return { ok: false, reason: 'the host is shutting down' };
      }
      this.#failures = 0;
      this.#use(started.instance);
      return started;
    } finally {
      this.#starting = undefined;
    }
  }
}
