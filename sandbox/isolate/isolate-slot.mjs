// One isolate of an isolate process and the fresh contexts it hands out, one
// per call, to one call at a time: concurrent calls of a tool get isolates of
// their own, so one call's heap exhaustion never fails another. Creating a
// context, running the prelude and compiling and linking the tool module costs
// about a millisecond, so contexts are prepared ahead, when the slot is built
// and after each call, and the next call's module is evaluated then too: a warm
// call only calls the tool.
// The prelude (behind the harden script) is compiled once per isolate as a
// Script: each context runs it afresh (its own closures, nothing shared but
// immutable code).
// Plain ESM: it runs in the isolate process (isolate-process.mjs).
import { evaluateAtOnce, TIMED_OUT } from './run-at-once.mjs';

/** Contexts kept prepared per slot: back-to-back calls find one ready while the next is built. */
export const SPARE_CONTEXTS = 3;
/** Calls between two looks at a slot's heap. */
export const HEAP_CHECK_EVERY_CALLS = 16;
/** Share of the memory limit above which a slot's isolate is replaced between calls. */
export const HEAP_REPLACE_FRACTION = 0.5;
/** Bound on building the prelude's runtime (it only defines functions). */
const PRELUDE_EVAL_TIMEOUT_MS = 1000;
/**
 * Bound on running a tool module's top level ahead of its call, after the start
 * (whose first top level gets START_TOP_LEVEL_TIMEOUT_MS: see firstTopLevelTimeoutMs).
 * Past it the context is thrown away and that slot stops evaluating ahead: its
 * calls run the top level themselves, within their own deadline, as any call once did.
 */
export const EVALUATE_AHEAD_TIMEOUT_MS = 1000;

const RUNTIME_OPTION_KEYS = ['maxPendingHostCalls', 'maxOutputChars', 'maxMessageChars', 'maxEvents', 'maxEventChars', 'maxPathChars'];
const PRELUDE_EXPORT = 'export default function createToolRuntime(';

/**
 * Globals removed from every tool context before any tool code runs, as a first
 * line (the process boundary is the second): `Atomics.waitAsync` aborts the whole
 * process in isolated-vm 5.0.4 ("terminate called without an active exception"),
 * and SharedArrayBuffer and WebAssembly (whose memory is allocated outside the
 * isolate's heap limit, and which can make a shared buffer) have no use in a tool.
 * A FinalizationRegistry callback runs as a task of V8's own, outside every
 * timeout: one that spins holds the isolate for ever (and would hold this
 * process's thread at the next synchronous step of IsolateSlot).
 */
export const HARDEN_CONTEXT_SCRIPT = `'use strict';
(() => {
  const remove = (object, name) => { try { delete object[name]; } catch {} };
  remove(globalThis, 'SharedArrayBuffer');
  remove(globalThis, 'WebAssembly');
  if (typeof Atomics === 'object') { remove(Atomics, 'waitAsync'); remove(Atomics, 'wait'); }
  remove(globalThis, 'FinalizationRegistry');
})();`;

/**
 * The prelude module's text as the body of a closure: `$0` is the ctx
 * callback, `$1..$6` the runtime options. The file stays an ES module (so tsc
 * emits it unchanged and it can be read on its own); only its one export is
 * turned into a declaration.
 * @param {string} preludeSource
 */
export function toPreludeClosure(preludeSource) {
  const at = preludeSource.indexOf(PRELUDE_EXPORT);
  if (at < 0 || preludeSource.indexOf(PRELUDE_EXPORT, at + 1) >= 0) {
    throw new Error('the isolate prelude does not have exactly one createToolRuntime export');
  }
  const body = preludeSource.slice(0, at) + preludeSource.slice(at + 'export default '.length);
  return `'use strict';
${body}
const runtime = createToolRuntime($0, { maxPendingHostCalls: $1, maxOutputChars: $2, maxMessageChars: $3, maxEvents: $4, maxEventChars: $5, maxPathChars: $6 });
return (kind, a, b, c) => (kind === 'run' ? runtime.run(a, b, c) : runtime.settle(a, b, c));`;
}

/**
 * The Script run first in every context, compiled once per isolate: the harden
 * script, then the prelude's closure as the completion value. One compiled
 * Script run once per context instead of the harden text evaluated (compiled
 * again) per context and the prelude run apart: one synchronous step and one
 * compile fewer per context, and the globals are still gone before the
 * prelude's factory captures anything and before any tool code runs.
 * @param {string} preludeClosure  from toPreludeClosure
 */
export function preludeScriptSource(preludeClosure) {
  return `${HARDEN_CONTEXT_SCRIPT}\n(function ($0, $1, $2, $3, $4, $5, $6) {\n${preludeClosure}\n})`;
}

/**
 * @typedef {{ toolName: string, preludeClosure: string, toolSource: string, memoryMb: number,
 *   runtimeOptions: { maxPendingHostCalls: number, maxOutputChars: number, maxMessageChars: number, maxEvents: number, maxEventChars: number, maxPathChars: number } }} SlotSources
 * @typedef {{ binding: { dispatch: ((id: unknown, op: unknown, args: unknown) => void) | null },
 *   runtime: any, tool: { module: any } | { loadError: string }, release(): void,
 *   evaluated?: { ok: true } | { ok: false, error: unknown }, evaluating?: Promise<void> }} PreparedContext
 *   `evaluated`: how the module's top level ended, when it ran ahead of the call;
 *   `evaluating`: set while it runs ahead.
 */

/**
 * One isolate with its prepared contexts; retired after a stopped call, dead once disposed.
 *
 * Preparing is synchronous isolated-vm work on this thread: each asynchronous
 * isolated-vm call is a round trip to the isolate's thread that costs far more
 * CPU than the step itself (about 150 µs against 20 µs here), and a context
 * takes six of them. A synchronous call waits for the isolate's lock, so it is
 * made only while no tool code can hold it: on a new isolate, after tool code
 * that ran in synchronous steps only (run-at-once.mjs: over when they return),
 * or once one asynchronous step (creating a context, queued behind whatever tool
 * code ran on the isolate's thread, such as a continuation spinning to its
 * deadline) has come back. No tool code runs in any prepared step (the harden
 * script, the prelude, compiling and linking the module: all bounded, ours), and
 * nothing of a tool's can be scheduled to run later on its own (no
 * FinalizationRegistry, no Atomics.waitAsync, no WebAssembly: see the harden
 * script), so the lock is free when those steps take it.
 */
export class IsolateSlot {
  /**
   * @param {any} ivm  the isolated-vm module
   * @param {SlotSources} sources
   * @param {import('./run-at-once.mjs').StepsAtOnce} [stepsAtOnce]  the process's, shared by its slots; none by default
   */
  constructor(ivm, sources, stepsAtOnce = { on: false }) {
    this.ivm = ivm;
    this.sources = sources;
    this.stepsAtOnce = stepsAtOnce;
    this.busy = false;
    this.retired = false;
    /** @type {'retired' | 'wedged' | 'closed' | undefined} */
    this.hostDisposeReason = undefined;
    /** @type {PreparedContext[]} Prepared contexts, ready. */
    this.spares = [];
    /** @type {Promise<void> | undefined} A refill under way: a call waits for it. */
    this.refilling = undefined;
    /**
     * Whether tool code may have run on the isolate's thread since the isolate was last seen
     * idle (a step there may leave it running after the step came back); a synchronous step
     * of it is over when it returns, and leaves the isolate idle.
     */
    this.dirty = false;
    /** Asynchronous steps of tool code so far: whenIdle sees none started while it waited. */
    this.toolSteps = 0;
    this.preludeScript = undefined;
    this.callsSinceHeapCheck = 0;
    this.memoryLimitMb = Math.max(8, sources.memoryMb);
    /** @type {any[]} Modules of finished calls, released once the isolate is idle. */
    this.modulesToRelease = [];
    /** Whether the next call's module is evaluated during the refill (off after a top level timed out). */
    this.evaluatesAhead = true;
    /** Bound on the first top level run ahead, if not EVALUATE_AHEAD_TIMEOUT_MS (the process's start sets it). */
    this.firstTopLevelTimeoutMs = undefined;
    /** Contexts created ahead (fresh: nothing ever ran in them), not yet prepared because a call started. */
    this.rawContexts = [];
    /** Contexts handed to calls so far: a refill that sees it change across a wait takes no synchronous step. */
    this.takes = 0;
    // No onCatastrophicError: with one, isolated-vm suspends the thread that ran a step it could
    // not cut within 5 s of its timeout ("Script failed to terminate") or that ran out of memory,
    // and reports it on this process's main thread, the very thread a synchronous step
    // (run-at-once.mjs) runs on: the process hung or crashed (SIGSEGV), as a loaded machine
    // decided. Without one, a step is cut when it next can (the host's deadline and stop grace
    // bound it), and V8's fatal out-of-memory aborts the process with its report on stderr,
    // which the host reads as memory_limit.
    this.isolate = new ivm.Isolate({ memoryLimit: this.memoryLimitMb });
  }

  get isUsable() {
    return !this.retired && !this.isolate.isDisposed;
  }

  /** Whether a call would start at once: no refill under way, and a spare whose top level ran ahead. */
  get isReady() {
    const first = this.spares[0];
    return this.refilling === undefined && first !== undefined && first.evaluated !== undefined && this.isUsable;
  }

  /**
   * A prepared context for one call, after which the isolate counts as running
   * tool code until it is next seen idle. A spare whose top level is being run
   * ahead is waited for, never the rest of a refill: the call's own step on the
   * isolate's thread is queued behind that one at once, while the refill's next
   * context is still being made (and prepared only after the call: see refill).
   * @returns {Promise<PreparedContext>}
   */
  async take() {
    for (;;) {
      const first = this.spares[0];
      if (first?.evaluating !== undefined) {
        await first.evaluating;
        continue;
      }
      // Ready: run ahead, or a slot whose calls run their own top level (or a load error).
      if (first !== undefined && (first.evaluated !== undefined || !this.evaluatesAhead || !('module' in first.tool))) {
        return this.hand(/** @type {PreparedContext} */ (this.spares.shift()));
      }
      if (this.refilling !== undefined) {
        await this.refilling;
        continue;
      }
      if (first !== undefined) return this.hand(/** @type {PreparedContext} */ (this.spares.shift()));
      const created = await this.whenIdle();
      return this.hand(this.prepareNow(created ?? this.rawContexts.pop()));
    }
  }

  /** Keeps a context made ahead while spares and kept contexts are at most SPARE_CONTEXTS, else releases it. */
  keepAhead(context) {
    if (context !== undefined && this.spares.length + this.rawContexts.length <= SPARE_CONTEXTS) this.rawContexts.push(context);
    else if (context !== undefined) releaseContext(context);
  }

  /** @param {PreparedContext} prepared */
  hand(prepared) {
    this.takes += 1;
    return prepared;
  }

  /**
   * Starts preparing contexts until SPARE_CONTEXTS are waiting, the first with
   * its top level run ahead. After a call, the next spare's top level is queued
   * on the isolate's thread first (the next call waits for that alone), the
   * next context's creation right behind it; once both are back the isolate is
   * idle and the new context is prepared synchronously, unless a call took a
   * spare meanwhile: its tool code may hold the isolate, so the fresh context
   * (never used) is kept and prepared by the refill after that call.
   */
  refill() {
    if (this.refilling !== undefined || !this.isUsable) return;
    const first = this.spares[0];
    const firstReady = first === undefined || first.evaluated !== undefined || first.evaluating !== undefined || !this.evaluatesAhead || !('module' in first.tool);
    if (this.spares.length >= SPARE_CONTEXTS && firstReady) return;
    const takes = this.takes;
    this.refilling = (async () => {
      // The last call's code ran in synchronous steps only (or none ran): the context made ahead
      // is prepared now, just after that call answered, while its answer crosses the host, so
      // this thread is free when the next call comes.
      if (this.isIdle) while (this.spares.length < SPARE_CONTEXTS && this.rawContexts.length > 0 && this.isUsable) this.spares.push(this.prepareNow(this.rawContexts.pop()));
      const evaluation = this.evaluateAhead();
      // The next context is made ahead on the isolate's thread, beside this thread's work (most of a context's cost).
      this.keepAhead(await this.whenIdle(true));
      await evaluation;
      // A call started: no synchronous step while its code may hold the isolate.
      if (this.takes !== takes && !this.isIdle) return;
      // Spares still short (a new slot): made here, the one made ahead kept for the next refill.
      while (this.spares.length < SPARE_CONTEXTS && this.isUsable) this.spares.push(this.prepareNow(this.rawContexts.length > 1 ? this.rawContexts.pop() : undefined));
      // A new slot's first spare (or one whose top level could not run ahead before), then the
      // isolate seen idle behind it (and one more context made ahead), so its first call may run at once.
      if (this.evaluateAhead() !== undefined) this.keepAhead(await this.whenIdle(true));
    })()
      // A failed spare is dropped; the next call prepares its own and reports the failure.
      .catch(() => undefined)
      .finally(() => {
        this.refilling = undefined;
      });
  }

  /**
   * Runs the next call's module top level now, off that call's path, so the call
   * itself is one step on the isolate's thread (the tool) instead of two. Only
   * the first spare: one evaluated module at most waits beside a call's, as
   * when each call evaluated its own. The top level has no ctx (it gets one
   * only as an argument of the default export), so nothing of it reaches a
   * call; a throw is kept and reported by the call that takes the context, as
   * it would have been; a heap exhaustion ends the isolate as it would have.
   * A call waiting for this spare waits for `evaluating`.
   * @returns {Promise<void> | undefined}
   */
  evaluateAhead() {
    const next = this.spares[0];
    if (!this.evaluatesAhead || next === undefined || next.evaluated !== undefined || next.evaluating !== undefined || !('module' in next.tool) || !this.isUsable) return undefined;
    const { module } = next.tool;
    const timeout = this.firstTopLevelTimeoutMs ?? EVALUATE_AHEAD_TIMEOUT_MS;
    this.firstTopLevelTimeoutMs = undefined;
    if (this.mayStepAtOnce) {
      try {
        if (evaluateAtOnce(module, timeout, () => this.isUsable)) next.evaluated = { ok: true };
        else {
          // Past the slice: this process takes no synchronous step of tool code any more, and the
          // context goes; the refill prepares another and runs its top level on the isolate's thread.
          this.stepsAtOnce.on = false;
          this.spares.splice(this.spares.indexOf(next), 1);
          next.release();
        }
      } catch (error) {
        next.evaluated = { ok: false, error };
      }
      return undefined;
    }
    next.evaluating = (async () => {
      try {
        await this.runsToolCode(module.evaluate({ timeout }));
        next.evaluated = { ok: true };
      } catch (error) {
        if (error instanceof Error && error.message === TIMED_OUT) {
          // A slow top level: this context goes, and this slot's calls evaluate their own.
          this.evaluatesAhead = false;
          const at = this.spares.indexOf(next);
          if (at >= 0) this.spares.splice(at, 1);
          next.release();
          return;
        }
        next.evaluated = { ok: false, error };
      } finally {
        next.evaluating = undefined;
      }
    })();
    return next.evaluating;
  }

  /** Settles once a refill under way is done (the first context at start). */
  async whenRefilled() {
    while (this.refilling !== undefined) await this.refilling;
  }

  /**
   * Resolves when no tool code can hold the isolate: at once if none ran on its
   * thread since it was last idle, else after one asynchronous step, creating a
   * context (the first of the refill), queued behind whatever the last call left
   * running; that step is taken anyway when `createAhead`. Modules of finished
   * calls are released then, when nothing can be reading isolated-vm's module
   * map on the isolate's thread.
   * @param {boolean} [createAhead]
   * @returns {Promise<any>} the context created on the way, if one was
   */
  async whenIdle(createAhead = false) {
    let context;
    if (this.dirty || createAhead) {
      const toolSteps = this.toolSteps;
      context = await this.isolate.createContext();
      if (this.toolSteps === toolSteps) this.dirty = false;
    }
    for (const module of this.modulesToRelease.splice(0)) releaseNow(module);
    return context;
  }

  /**
   * Whether released contexts have filled half the heap. V8 collects a released
   * context only in a late full collection, and isolated-vm's limit can trip
   * first (an echo tool with 16 MB failed one innocent call in about 140), so a
   * crowded isolate is replaced between calls instead.
   */
  async isCrowdedByGarbage() {
    this.callsSinceHeapCheck += 1;
    if (this.callsSinceHeapCheck < HEAP_CHECK_EVERY_CALLS || !this.isUsable) return false;
    this.callsSinceHeapCheck = 0;
    const stats = this.isIdle ? this.isolate.getHeapStatisticsSync() : await this.isolate.getHeapStatistics();
    return this.isUsable && stats.used_heap_size > HEAP_REPLACE_FRACTION * this.memoryLimitMb * 1024 * 1024;
  }

  /**
   * Marks `step`, an asynchronous isolated-vm call that runs tool code (a call's run, a ctx
   * answer's continuation, a top level): the isolate is not idle until whenIdle has seen it
   * so, since that code may run on after its step came back.
   * @template T @param {Promise<T>} step @returns {Promise<T>}
   */
  runsToolCode(step) {
    this.dirty = true;
    this.toolSteps += 1;
    return step;
  }

  /**
   * Whether no tool code can hold the isolate's lock: a synchronous step takes it at once, or
   * after a step of ours on its thread (making a context, reading its heap: bounded, short).
   */
  get isIdle() {
    return !this.dirty && this.isUsable;
  }

  /** Whether tool code may run here in a synchronous step (run-at-once.mjs): the isolate is idle and the process still takes them. */
  get mayStepAtOnce() {
    return this.stepsAtOnce.on && this.isIdle;
  }

  /** @param {'retired' | 'wedged' | 'closed'} reason */
  dispose(reason) {
    if (this.isolate.isDisposed) return;
    this.hostDisposeReason ??= reason;
    this.retired = true;
    for (const spare of this.spares.splice(0)) spare.release();
    for (const context of this.rawContexts.splice(0)) releaseContext(context);
    try {
      this.isolate.dispose();
    } catch {
      // Already disposed by isolated-vm (memory limit) between the check and here.
    }
    // The isolate is gone: releasing its modules now touches nothing of it.
    for (const module of this.modulesToRelease.splice(0)) releaseNow(module);
  }

  /**
   * Prepares one context synchronously (only while the isolate is idle: see the
   * class comment); `context` is one created on the way there, else one is made.
   * @returns {PreparedContext}
   */
  prepareNow(context = this.isolate.createContextSync()) {
    const { isolate, ivm } = this;
    /** @type {{ release(): void }[]} */
    const handles = [];
    /** @type {PreparedContext['binding']} */
    const binding = { dispatch: null };
    const release = () => {
      binding.dispatch = null;
      for (const handle of handles.reverse()) {
        try {
          handle.release();
        } catch {
          // Released already, or the isolate is gone.
        }
      }
      handles.length = 0;
      try {
        context.release();
      } catch {
        // The isolate is gone.
      }
    };
    try {
      // The callback turns into a plain function inside the isolate; its arguments arrive here as copies.
      const ctxCallback = new ivm.Callback(
        (id, op, args) => {
          binding.dispatch?.(id, op, args);
        },
        { ignored: true },
      );
      this.preludeScript ??= isolate.compileScriptSync(preludeScriptSource(this.sources.preludeClosure), {
        filename: 'toolhost:///prelude.mjs',
      });
      // Hardens the context first, then hands back the prelude's factory: one step on the isolate.
      const factory = this.preludeScript.runSync(context, { reference: true, timeout: PRELUDE_EVAL_TIMEOUT_MS });
      handles.push(factory);
      const runtime = factory.applySync(undefined, [ctxCallback, ...RUNTIME_OPTION_KEYS.map((key) => this.sources.runtimeOptions[key])], {
        result: { reference: true },
        timeout: PRELUDE_EVAL_TIMEOUT_MS,
      });
      handles.push(runtime);
      const tool = this.linkTool(context, handles);
      return { binding, runtime, tool, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  // Modules are bound to the context they are instantiated in, so the tool is
  // compiled again for each context (V8 reuses its parse); no cached data from
  // anywhere is ever passed to the compiler. isolated-vm keeps an isolate's
  // modules in one unlocked map, which compiling (here, holding the isolate)
  // adds to and module.release() (on this thread, without the lock) removes
  // from, so a module is released only while the isolate is idle (whenIdle).
  linkTool(context, handles) {
    let module;
    try {
      module = this.isolate.compileModuleSync(this.sources.toolSource, {
        filename: `toolhost:///tools/${this.sources.toolName}.mjs`,
      });
    } catch (error) {
      if (this.isolate.isDisposed) throw error;
      return { loadError: `the tool module does not compile: ${describeCompileError(error)}` };
    }
    handles.push({ release: () => this.modulesToRelease.push(module) });
    if (module.dependencySpecifiers.length > 0) {
      return { loadError: 'the tool module imports other modules, which isolate tools cannot do' };
    }
    module.instantiateSync(context, refuseImport);
    return { module };
  }
}

function releaseContext(context) {
  try {
    context.release();
  } catch {
    // The isolate is gone.
  }
}

function releaseNow(module) {
  try {
    module.release();
  } catch {
    // Released already, or the isolate is gone.
  }
}

function refuseImport() {
  throw new Error('isolate tools cannot import modules');
}

function describeCompileError(error) {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 500);
  return 'unknown error';
}
