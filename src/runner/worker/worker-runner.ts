// worker runner: trusted first-party JavaScript in a Piscina pool (one pool per
// tool) with a heap limit per thread, a bounded queue, and a timeout or cancel
// that stops the call: taken off the line if it has not begun, else its thread
// is ended and Piscina starts a fresh one. Each thread serves one lane (a
// Piscina task for the thread's life and a MessagePort its calls travel on,
// worker-lane.ts); it holds a few calls at once but runs them one at a time
// (call-gates.ts, call-dispatch.ts). Results come back as plain envelopes from
// sandbox/worker/worker-entry.mjs.
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { defaultMessage } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Runner, RunSpec } from '../types.js';
import type { WorkerAbortMessage } from '../../../sandbox/shared/messages.mjs';
import { readWorkerEvent } from '../../../sandbox/shared/readers.mjs';
import type { Job, RunOptions, RunOutcome } from '../run-types.js';
import { failure, toRunOutcome, type Outcome } from '../tool-envelope.js';
import { CallDispatch } from './call-dispatch.js';
import { CallGates } from './call-gates.js';
import { createWorkerPool, WORKER_IDLE_TIMEOUT_MS } from './worker-pool.js';
import { WorkerCall, type CallRules } from './worker-call.js';

/** Calls that may wait for room in a thread; more are refused rather than queued without bound. */
export const WORKER_MAX_QUEUE = 64;
/**
 * Calls handed to one thread at a time (it runs them one after another): enough
 * that a busy thread finds its next call already there instead of sleeping and
 * being woken for each, few enough that little waits behind a slow call.
 */
export const WORKER_CALLS_PER_THREAD = 4;

/** Builds the runner for one `mode: worker` tool. */
export function createWorkerRunner(spec: RunSpec, deps: { logger: Logger }): Runner {
  const logger = deps.logger.child({ runner: 'worker', tool: spec.name });
  if (spec.entryPath === undefined) throw new Error(`worker tool ${spec.name} has no entry`);
  const maxThreads = Math.max(1, spec.poolSize);
  const capacity = maxThreads * WORKER_CALLS_PER_THREAD;
  const gates = new CallGates(capacity);
  // One channel per pool carries every call's events (tagged with its callId)
  // and the host's aborts; a MessagePort transferred per call leaked memory in
  // both threads (see sandbox/worker/worker-entry.mjs).
  const eventChannel = `toolhost-worker-events-${randomUUID()}`;
  const pool = createWorkerPool(spec, { gates, eventChannel });
  pool.on('error', (error: unknown) => logger.warn({ err: error }, 'worker pool error'));
  const events = new BroadcastChannel(eventChannel);
  const calls = new Map<string, WorkerCall>();
  events.onmessage = (event: unknown) => {
    const message = readWorkerEvent((event as { data?: unknown }).data);
    if (message !== undefined) calls.get(message.callId)?.event(message);
  };
  events.unref();
  let closed = false;

  const dispatch = new CallDispatch(pool, gates, {
    maxThreads,
    perThread: WORKER_CALLS_PER_THREAD,
    maxQueue: WORKER_MAX_QUEUE,
    idleMs: WORKER_IDLE_TIMEOUT_MS,
    isClosed: () => closed,
    classify: (error, call) => {
      const classified = classifyWorkerError(error, { memoryMb: spec.memoryMb, closed });
      if (!classified.ok && classified.code === 'internal') logger.error({ err: error, callId: call.job.callId }, 'worker runner failed');
      return classified;
    },
    postAbort: (callId) => safePost(events, { type: 'abort', callId } satisfies WorkerAbortMessage),
  });
  const rules: CallRules = {
    logger,
    floodCapBytes: spec.floodCapBytes,
    onSettled: (call) => {
      if (calls.get(call.job.callId) === call) calls.delete(call.job.callId);
    },
  };
  const stop = (call: WorkerCall): void => dispatch.stop(call);

  function run(job: Job, options: RunOptions): Promise<RunOutcome> {
    const startedMs = performance.now();
    if (closed) return Promise.resolve(toRunOutcome(runnerClosed(), performance.now() - startedMs));
    const { control } = options;
    if (control.reason !== undefined) return Promise.resolve(toRunOutcome({ ok: false as const, ...control.failure() }, performance.now() - startedMs));
    return new Promise<RunOutcome>((resolve) => {
      const call = new WorkerCall(job, options, rules, startedMs, resolve);
      calls.set(job.callId, call);
      dispatch.submit(call);
      // The control says when to stop (deadline, cancel, shutdown); at once if it already has.
      if (!call.done) call.stopsWith(stop);
    });
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    dispatch.drop(runnerClosed());
    await pool.destroy();
    events.close();
  }

  return { mode: 'worker', run, close };
}

function runnerClosed(): Outcome {
  return failure('cancelled', defaultMessage('cancelled', 'runner_closed'), { reason: 'runner_closed' });
}

/** Maps a rejection from `pool.run` (other than our own abort) to a run code. */
export function classifyWorkerError(error: unknown, facts: { memoryMb: number; closed: boolean }): Outcome {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const message = error instanceof Error ? error.message : '';
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return failure('memory_limit', defaultMessage('memory_limit'), { memoryMb: facts.memoryMb });
  }
  if (facts.closed) return failure('cancelled', defaultMessage('cancelled', 'runner_closed'), { reason: 'runner_closed' });
  // Piscina reports a thread that exited mid-task only in this message.
  const exited = /^worker exited with code: (-?\d+)$/.exec(message);
  if (exited) {
    return failure('tool_crashed', 'The tool ended its worker thread.', { exitCode: Number(exited[1]) });
  }
  // Anything else that kills the thread (an uncaught exception from a timer, say) is a crash.
  return failure('tool_crashed', 'The tool crashed its worker thread.', { reason: 'worker_error' });
}

function safePost(channel: BroadcastChannel, message: unknown): void {
  try {
    channel.postMessage(message);
  } catch {
    // Already closed.
  }
}
