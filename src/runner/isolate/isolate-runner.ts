// isolate runner: untrusted JavaScript in an isolated-vm isolate with the
// manifest's heap limit, a fresh context per call, arguments and results copied
// across, ctx served by host callbacks, and a host-side wall clock that holds
// even while the tool awaits a ctx call.
import { readFile } from 'node:fs/promises';
import ivm from 'isolated-vm';
import type { Logger } from '../../log.js';
import type { Runner, RunSpec } from '../types.js';
import type { Job, RunOptions, RunOutcome } from '../wire.js';
import { createCtxHost, MAX_CTX_EVENTS, MAX_PENDING_CTX_CALLS, type CtxHost } from './ctx-host.js';
import { IsolateGeneration, type ContextSources, type PreparedContext } from './context-pool.js';
import { classifyIsolateError, isIvmFailure, isToolMemoryError } from './isolate-errors.js';
import { failure, MAX_TOOL_MESSAGE_CHARS, parseToolEnvelope, toRunOutcome, type Outcome } from '../tool-envelope.js';

const PRELUDE_URL = new URL('../../../sandbox/isolate-prelude.mjs', import.meta.url);

/** Builds the runner for one `mode: isolate` tool. */
export function createIsolateRunner(spec: RunSpec, deps: { logger: Logger }): Runner {
  const logger = deps.logger.child({ runner: 'isolate', tool: spec.name });
  let sources: Promise<ContextSources> | undefined;
  let generation: IsolateGeneration | undefined;
  const generations = new Set<IsolateGeneration>();
  let closed = false;

  function loadSources(): Promise<ContextSources> {
    sources ??= readSources(spec);
    return sources;
  }

  /** The current usable generation, building (and warming) a new one when needed. */
  async function currentGeneration(): Promise<IsolateGeneration> {
    const loaded = await loadSources();
    for (const old of generations) if (old.isolate.isDisposed) generations.delete(old);
    if (generation === undefined || !generation.isUsable) {
      if (generation !== undefined && generation.inFlight === 0) generation.dispose('retired');
      generation = new IsolateGeneration(loaded, logger);
      generations.add(generation);
    }
    return generation;
  }

  // Warm up off the call path: the first call finds its context ready.
  void currentGeneration()
    .then((built) => built.refill())
    .catch((error: unknown) => logger.warn({ err: error }, 'isolate warm-up failed'));

  async function run(job: Job, options: RunOptions): Promise<RunOutcome> {
    const startedMs = performance.now();
    const finish = (outcome: Outcome): RunOutcome => toRunOutcome(outcome, performance.now() - startedMs);
    if (closed) return finish(failure('cancelled', 'The host is shutting down.', { reason: 'runner_closed' }));
    const { control } = options;
    if (control.reason !== undefined) return finish({ ok: false as const, ...control.failure() });

    // The call's control arms the deadline before a context is taken: an isolate
    // left spinning by an earlier call's stray continuation must cost this call
    // its deadline, not hang it. Its first reason wins over the tool's own result.
    const stopped = control.stopped.then((): Outcome => ({ ok: false, ...control.failure() }));

    let callEnded = false;
    let gen: IsolateGeneration | undefined;
    let prepared: PreparedContext | undefined;
    let ctxHost: CtxHost | undefined;
    const classify = (error: unknown, from: IsolateGeneration): Outcome => ({
      ok: false,
      ...classifyIsolateError(error, {
        isolateDisposed: from.isolate.isDisposed,
        ...(from.hostDisposeReason !== undefined ? { hostDisposeReason: from.hostDisposeReason } : {}),
        memoryMb: spec.memoryMb,
      }),
    });

    const execution = (async (): Promise<Outcome> => {
      let current: IsolateGeneration;
      try {
        current = await currentGeneration();
      } catch (error) {
        logger.error({ err: error, callId: job.callId }, 'could not load the isolate tool');
        return failure('internal', 'The isolate runner could not start the tool.', { reason: 'prepare_failed' });
      }
      if (callEnded) return failure('internal', 'The call ended before it started.', { reason: 'ended' });
      gen = current;
      current.inFlight += 1;
      let taken: PreparedContext;
      try {
        taken = await current.take();
      } catch (error) {
        if (current.isolate.isDisposed) return classify(error, current);
        logger.error({ err: error, callId: job.callId }, 'could not prepare an isolate context');
        return failure('internal', 'The isolate runner could not start the tool.', { reason: 'prepare_failed' });
      }
      if (callEnded) {
        taken.release();
        return failure('internal', 'The call ended before it started.', { reason: 'ended' });
      }
      prepared = taken;
      const { runtime } = taken;
      ctxHost = createCtxHost({
        spec,
        options,
        callId: job.callId,
        logger,
        settle: (id, ok, value) => {
          runtime
            .apply(undefined, ['settle', id, ok, new ivm.ExternalCopy(value).copyInto({ release: true })], {})
            .catch(() => {
              // The context or isolate is gone: the call has ended already.
            });
        },
      });
      taken.binding.dispatch = ctxHost.dispatch;
      try {
        return await execute(taken, job, control.timeoutMs, spec);
      } catch (error) {
        return classify(error, current);
      }
    })();

    let outcome: Outcome;
    try {
      outcome = await Promise.race([execution, stopped]);
    } finally {
      callEnded = true;
      ctxHost?.close();
      prepared?.release();
    }

    if (gen !== undefined) {
      if (control.reason !== undefined || gen.isolate.isDisposed || isScriptTimeout(outcome)) {
        // The stopped tool may still hold the isolate (a loop after an await, a
        // pending promise): this generation takes no more calls.
        gen.retire();
      }
      gen.finishCall();
    }
    if (!outcome.ok && outcome.code === 'memory_limit') {
      logger.warn({ callId: job.callId, memoryMb: spec.memoryMb }, 'isolate hit its memory limit; rebuilding');
    }
    // Prepare the next context after this call has its answer, off its path.
    if (!closed) {
      const finished = gen;
      setImmediate(() => {
        void (async () => {
          if (finished !== undefined && (await finished.isCrowdedByGarbage())) {
            logger.debug({ tool: spec.name }, 'isolate heap full of released contexts; starting a fresh isolate');
            finished.retire();
          }
          (await currentGeneration()).refill();
        })().catch(() => {});
      });
    }
    return finish(outcome);
  }

  async function close(): Promise<void> {
    closed = true;
    for (const gen of generations) gen.dispose('closed');
    generations.clear();
    generation = undefined;
  }

  return { mode: 'isolate', run, close };
}

async function execute(prepared: PreparedContext, job: Job, timeoutMs: number, spec: RunSpec): Promise<Outcome> {
  if ('loadError' in prepared.tool) {
    return failure('tool_error', prepared.tool.loadError.slice(0, MAX_TOOL_MESSAGE_CHARS), { reason: 'load_failed' });
  }
  const { module } = prepared.tool;
  // isolated-vm reads 0 as "no timeout" and wants whole milliseconds.
  const evalTimeoutMs = Math.max(1, Math.ceil(timeoutMs));
  // Top-level tool code runs here, inside the call's budget, never while preparing.
  try {
    await module.evaluate({ timeout: evalTimeoutMs });
  } catch (error) {
    if (!isIvmFailure(error)) {
      const message = error instanceof Error ? error.message : String(error);
      return failure('tool_error', `the tool module threw while loading: ${message}`.slice(0, MAX_TOOL_MESSAGE_CHARS), {
        reason: 'load_failed',
      });
    }
    throw error;
  }
  const envelope: unknown = await prepared.runtime.apply(
    undefined,
    ['run', module.namespace.derefInto(), new ivm.ExternalCopy(job.args).copyInto({ release: true }), job.callId],
    { timeout: evalTimeoutMs, result: { copy: true, promise: true } },
  );
  return parseToolEnvelope(envelope, {
    source: 'isolate',
    maxOutputBytes: spec.maxOutputBytes,
    checkOutputBytes: true,
    memoryLimit: { memoryMb: spec.memoryMb, isMemoryError: isToolMemoryError },
  });
}

function isScriptTimeout(outcome: Outcome): boolean {
  return !outcome.ok && outcome.code === 'timeout';
}

async function readSources(spec: RunSpec): Promise<ContextSources> {
  if (spec.entryPath === undefined) throw new Error(`isolate tool ${spec.name} has no entry`);
  const [preludeSource, toolSource] = await Promise.all([
    readFile(PRELUDE_URL, 'utf8'),
    readFile(spec.entryPath, 'utf8'),
  ]);
  return {
    toolName: spec.name,
    preludeSource,
    toolSource,
    memoryMb: spec.memoryMb,
    runtimeOptions: {
      maxPendingHostCalls: MAX_PENDING_CTX_CALLS,
      maxOutputChars: spec.maxOutputBytes,
      maxMessageChars: MAX_TOOL_MESSAGE_CHARS,
      maxEvents: MAX_CTX_EVENTS,
    },
  };
}
