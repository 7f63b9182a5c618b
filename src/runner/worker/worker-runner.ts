// worker runner: trusted first-party JavaScript in a Piscina pool (one pool per
// tool) with a heap limit per thread, a bounded queue, and a timeout or cancel
// that aborts the task: Piscina terminates that thread and starts a fresh one.
// Results come back as plain envelopes from sandbox/worker-entry.mjs.
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from '../../log.js';
import type { Runner, RunSpec } from '../types.js';
import type { Job, RunOptions, RunOutcome, ToolLogLevel, WorkerAbortMessage, WorkerPoolData, WorkerTask } from '../wire.js';
import { failure, parseToolEnvelope, toRunOutcome, type Outcome } from '../tool-envelope.js';

/** Calls that may wait for a free thread; more are refused rather than queued without bound. */
export const WORKER_MAX_QUEUE = 64;
/** How long an idle thread beyond the first is kept. */
export const WORKER_IDLE_TIMEOUT_MS = 30_000;
/** How long a finished call waits for its last progress/log events to drain. */
const EVENT_DRAIN_MS = 1000;

const WORKER_ENTRY_URL = new URL('../../../sandbox/worker-entry.mjs', import.meta.url);
const LOG_LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

/** Builds the runner for one `mode: worker` tool. */
export function createWorkerRunner(spec: RunSpec, deps: { logger: Logger }): Runner {
  const logger = deps.logger.child({ runner: 'worker', tool: spec.name });
  if (spec.entryPath === undefined) throw new Error(`worker tool ${spec.name} has no entry`);
  // One channel per pool carries every call's events (tagged with its callId)
  // and the host's aborts; a MessagePort transferred per call leaked memory in
  // both threads (see sandbox/worker-entry.mjs).
  const eventChannel = `toolhost-worker-events-${randomUUID()}`;
  const pool = new Piscina({
    filename: WORKER_ENTRY_URL.href,
    minThreads: 1,
    maxThreads: Math.max(1, spec.poolSize),
    idleTimeout: WORKER_IDLE_TIMEOUT_MS,
    maxQueue: WORKER_MAX_QUEUE,
    // Only the names the manifest and policy allow, never the host's whole environment.
    env: { ...spec.env },
    resourceLimits: { maxOldGenerationSizeMb: Math.max(8, spec.memoryMb) },
    // What every call of this tool shares, sent once per thread instead of cloned into each task.
    workerData: {
      entryPath: spec.entryPath,
      roots: spec.roots.map((root) => ({ path: root.path, access: root.access })),
      protectedPaths: [...(spec.protectedPaths ?? [])],
      hiddenPaths: [...(spec.hiddenPaths ?? [])],
      networkAllow: [...spec.networkAllow],
      ...(spec.sideEffect !== undefined ? { sideEffect: spec.sideEffect } : {}),
      maxOutputBytes: spec.maxOutputBytes,
      eventChannel,
    } satisfies WorkerPoolData,
  });
  pool.on('error', (error: unknown) => logger.warn({ err: error }, 'worker pool error'));
  const events = new BroadcastChannel(eventChannel);
  const listeners = new Map<string, (message: Record<string, unknown>) => void>();
  events.onmessage = (event: unknown) => {
    const message = (event as { data?: unknown }).data;
    if (typeof message !== 'object' || message === null) return;
    const record = message as Record<string, unknown>;
    if (typeof record['callId'] === 'string') listeners.get(record['callId'])?.(record);
  };
  events.unref();
  let closed = false;

  async function run(job: Job, options: RunOptions): Promise<RunOutcome> {
    const startedMs = performance.now();
    const finish = (outcome: Outcome): RunOutcome => toRunOutcome(outcome, performance.now() - startedMs);
    if (closed) return finish(failure('cancelled', 'The host is shutting down.', { reason: 'runner_closed' }));
    const { control } = options;
    if (control.reason !== undefined) return finish({ ok: false as const, ...control.failure() });

    // The call's control says when to stop (deadline, cancel, shutdown): Piscina
    // aborts the task (and ends its thread) and the worker is told over the channel.
    const abort = new TaskAbort();
    const unregister = control.onStop(() => {
      abort.abort(control.signal.reason);
      safePost(events, { type: 'abort', callId: job.callId } satisfies WorkerAbortMessage);
    });
    const drain = new EventDrain();
    listeners.set(job.callId, (message) => {
      forwardEvent(message, options, logger, job.callId);
      drain.received();
    });

    try {
      const envelope: unknown = await pool.run({ callId: job.callId, args: job.args } satisfies WorkerTask, { signal: abort });
      // The answer counts the events the worker posted for this call: wait for the rest so none is lost.
      const draining = drain.until(postedEventsOf(envelope), EVENT_DRAIN_MS);
      if (draining !== undefined) await draining;
      return finish(parseToolEnvelope(envelope, { source: 'worker', maxOutputBytes: spec.maxOutputBytes, checkOutputBytes: false }));
    } catch (error) {
      if (control.reason !== undefined) return finish({ ok: false as const, ...control.failure() });
      const classified = classifyWorkerError(error, { memoryMb: spec.memoryMb, closed });
      if (!classified.ok && classified.code === 'internal') logger.error({ err: error, callId: job.callId }, 'worker runner failed');
      return finish(classified);
    } finally {
      unregister();
      listeners.delete(job.callId);
    }
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    await pool.destroy();
    events.close();
  }

  return { mode: 'worker', run, close };
}

/** Maps a rejection from `pool.run` (other than our own abort) to a run code. */
export function classifyWorkerError(error: unknown, facts: { memoryMb: number; closed: boolean }): Outcome {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const message = error instanceof Error ? error.message : '';
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return failure('memory_limit', 'The tool exceeded its memory limit.', { memoryMb: facts.memoryMb });
  }
  if (facts.closed) return failure('cancelled', 'The host is shutting down.', { reason: 'runner_closed' });
  // Piscina reports a thread that exited mid-task only in this message.
  const exited = /^worker exited with code: (-?\d+)$/.exec(message);
  if (exited) {
    return failure('tool_crashed', 'The tool ended its worker thread.', { exitCode: Number(exited[1]) });
  }
  if (message === 'Task queue is at limit') {
    return failure('internal', 'The worker pool is overloaded.', { reason: 'queue_full', maxQueue: WORKER_MAX_QUEUE });
  }
  // Anything else that kills the thread (an uncaught exception from a timer, say) is a crash.
  return failure('tool_crashed', 'The tool crashed its worker thread.', { reason: 'worker_error' });
}

function forwardEvent(message: unknown, options: RunOptions, logger: Logger, callId: string): void {
  if (typeof message !== 'object' || message === null) return;
  const event = message as Record<string, unknown>;
  if (event['type'] === 'progress' && typeof event['progress'] === 'number') {
    options.onProgress?.({
      progress: event['progress'],
      ...(typeof event['total'] === 'number' ? { total: event['total'] } : {}),
      ...(typeof event['message'] === 'string' ? { message: event['message'] } : {}),
    });
  } else if (event['type'] === 'log' && typeof event['message'] === 'string') {
    const level = (typeof event['level'] === 'string' && LOG_LEVELS.has(event['level']) ? event['level'] : 'info') as ToolLogLevel;
    if (options.onLog) options.onLog(level, event['message']);
    else logger.debug({ callId, level }, event['message']);
  } else if (event['type'] === 'denied' && typeof event['denial'] === 'object' && event['denial'] !== null) {
    const denial = event['denial'] as Record<string, unknown>;
    const parsed = { op: String(denial['op']), target: String(denial['target']), reason: String(denial['reason']) };
    logger.info({ callId, denial: parsed }, 'sandbox refused a ctx call');
    options.onDenied?.(parsed);
  }
}

/** How many events the worker says it posted for the call (its answer's `events`); 0 when absent or not a count. */
function postedEventsOf(envelope: unknown): number {
  const events = typeof envelope === 'object' && envelope !== null ? (envelope as Record<string, unknown>)['events'] : undefined;
  return typeof events === 'number' && Number.isSafeInteger(events) && events > 0 ? events : 0;
}

/**
 * The abort Piscina listens to for one task, fired by the call's control (through
 * the one onStop the runner registers anyway): Piscina accepts an emitter-style
 * signal, so a call does not add and remove a listener on an AbortSignal.
 */
class TaskAbort {
  aborted = false;
  reason: unknown = undefined;
  #listener: (() => void) | undefined;

  once(_event: 'abort', listener: () => void): void {
    this.#listener = listener;
  }

  off(_event: 'abort', listener: () => void): void {
    if (this.#listener === listener) this.#listener = undefined;
  }

  /** Piscina's name for off() in the build it ships. */
  removeListener(event: 'abort', listener: () => void): void {
    this.off(event, listener);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.();
  }
}

/** Counts a call's events as they arrive; until() waits for a number of them, bounded. */
class EventDrain {
  #count = 0;
  #wanted = 0;
  #wake: (() => void) | undefined;

  received(): void {
    this.#count++;
    if (this.#wake !== undefined && this.#count >= this.#wanted) this.#wake();
  }

  /** Resolves once `wanted` events arrived, or after `timeoutMs`; at once (no promise, no timer) when they all did. */
  until(wanted: number, timeoutMs: number): Promise<void> | undefined {
    if (this.#count >= wanted) return undefined;
    this.#wanted = wanted;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

function safePost(channel: BroadcastChannel, message: unknown): void {
  try {
    channel.postMessage(message);
  } catch {
    // Already closed.
  }
}
