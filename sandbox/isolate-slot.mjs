// One isolate of an isolate process and the fresh contexts it hands out, one
// per call, to one call at a time: concurrent calls of a tool get isolates of
// their own, so one call's heap exhaustion never fails another. Creating a
// context, running the prelude and compiling and linking the tool module costs
// about a millisecond, so contexts are prepared ahead, when the slot is built
// and after each call; a warm call only evaluates the module and calls the tool.
// The prelude is compiled once per isolate as a Script: each context runs it
// afresh (its own closures, nothing shared but immutable code).
// Plain ESM: it runs in the isolate process (sandbox/isolate-process.mjs).

/** Contexts kept prepared per slot: back-to-back calls find one ready while the next is built. */
export const SPARE_CONTEXTS = 2;
/** Calls between two looks at a slot's heap. */
export const HEAP_CHECK_EVERY_CALLS = 16;
/** Share of the memory limit above which a slot's isolate is replaced between calls. */
export const HEAP_REPLACE_FRACTION = 0.5;
/** Bound on building the prelude's runtime (it only defines functions). */
const PRELUDE_EVAL_TIMEOUT_MS = 1000;

const RUNTIME_OPTION_KEYS = ['maxPendingHostCalls', 'maxOutputChars', 'maxMessageChars', 'maxEvents', 'maxEventChars', 'maxPathChars'];
const PRELUDE_EXPORT = 'export default function createToolRuntime(';

/**
 * Globals removed from every tool context before any tool code runs, as a first
 * line (the process boundary is the second): `Atomics.waitAsync` aborts the whole
 * process in isolated-vm 5.0.4 ("terminate called without an active exception"),
 * and SharedArrayBuffer and WebAssembly (whose memory is allocated outside the
 * isolate's heap limit, and which can make a shared buffer) have no use in a tool.
 */
export const HARDEN_CONTEXT_SCRIPT = `'use strict';
(() => {
  const remove = (object, name) => { try { delete object[name]; } catch {} };
  remove(globalThis, 'SharedArrayBuffer');
  remove(globalThis, 'WebAssembly');
  if (typeof Atomics === 'object') { remove(Atomics, 'waitAsync'); remove(Atomics, 'wait'); }
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
 * @typedef {{ toolName: string, preludeClosure: string, toolSource: string, memoryMb: number,
 *   runtimeOptions: { maxPendingHostCalls: number, maxOutputChars: number, maxMessageChars: number, maxEvents: number, maxEventChars: number, maxPathChars: number } }} SlotSources
 * @typedef {{ binding: { dispatch: ((id: unknown, op: unknown, args: unknown) => void) | null },
 *   runtime: any, tool: { module: any } | { loadError: string }, release(): void }} PreparedContext
 */

/** One isolate with its prepared contexts; retired after a stopped call, dead once disposed. */
export class IsolateSlot {
  /**
   * @param {any} ivm  the isolated-vm module
   * @param {SlotSources} sources
   * @param {(message: string) => void} onCatastrophe
   */
  constructor(ivm, sources, onCatastrophe) {
    this.ivm = ivm;
    this.sources = sources;
    this.busy = false;
    this.retired = false;
    /** @type {'retired' | 'wedged' | 'closed' | undefined} */
    this.hostDisposeReason = undefined;
    /** @type {Promise<PreparedContext>[]} */
    this.spares = [];
    this.preludeScript = undefined;
    this.compileQueue = Promise.resolve();
    this.compiling = false;
    this.callsSinceHeapCheck = 0;
    this.memoryLimitMb = Math.max(8, sources.memoryMb);
    /** @type {any[]} */
    this.releasesAfterCompile = [];
    this.isolate = new ivm.Isolate({
      memoryLimit: this.memoryLimitMb,
      onCatastrophicError: (message) => {
        // V8 lost control of this isolate: nothing in this process is sound any more.
        this.retired = true;
        onCatastrophe(String(message));
      },
    });
  }

  get isUsable() {
    return !this.retired && !this.isolate.isDisposed;
  }

  /** The oldest prepared spare if there is one, else a context prepared now. */
  take() {
    return this.spares.shift() ?? this.prepare();
  }

  /** Starts preparing contexts in the background until SPARE_CONTEXTS are waiting. */
  refill() {
    while (this.spares.length < SPARE_CONTEXTS && this.isUsable) {
      const spare = this.prepare();
      // A failed spare is dropped; the next call prepares its own and reports the failure.
      spare.catch(() => {
        const at = this.spares.indexOf(spare);
        if (at >= 0) this.spares.splice(at, 1);
      });
      this.spares.push(spare);
    }
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
    const stats = await this.isolate.getHeapStatistics();
    return this.isUsable && stats.used_heap_size > HEAP_REPLACE_FRACTION * this.memoryLimitMb * 1024 * 1024;
  }

  /** @param {'retired' | 'wedged' | 'closed'} reason */
  dispose(reason) {
    if (this.isolate.isDisposed) return;
    this.hostDisposeReason ??= reason;
    this.retired = true;
    for (const spare of this.spares.splice(0)) spare.then((prepared) => prepared.release()).catch(() => {});
    try {
      this.isolate.dispose();
    } catch {
      // Already disposed by isolated-vm (memory limit) between the check and here.
    }
  }

  /** @returns {Promise<PreparedContext>} */
  async prepare() {
    const { isolate, ivm } = this;
    const context = await isolate.createContext();
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
      await context.eval(HARDEN_CONTEXT_SCRIPT, { timeout: PRELUDE_EVAL_TIMEOUT_MS });
      // The callback turns into a plain function inside the isolate; its arguments arrive here as copies.
      const ctxCallback = new ivm.Callback(
        (id, op, args) => {
          binding.dispatch?.(id, op, args);
        },
        { ignored: true },
      );
      this.preludeScript ??= isolate.compileScript(`(function ($0, $1, $2, $3, $4, $5, $6) {\n${this.sources.preludeClosure}\n})`, {
        filename: 'toolhost:///prelude.mjs',
      });
      const script = await this.preludeScript;
      const factory = await script.run(context, { reference: true, timeout: PRELUDE_EVAL_TIMEOUT_MS });
      handles.push(factory);
      const runtime = await factory.apply(
        undefined,
        [ctxCallback, ...RUNTIME_OPTION_KEYS.map((key) => this.sources.runtimeOptions[key])],
        { result: { reference: true }, timeout: PRELUDE_EVAL_TIMEOUT_MS },
      );
      handles.push(runtime);
      const tool = await this.linkTool(context, handles);
      return { binding, runtime, tool, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  // isolated-vm keeps an isolate's modules in one unlocked map: compileModule
  // adds to it on the isolate's thread, module.release() removes from it on
  // ours. The two at once corrupt it, so compiles run one at a time and a
  // release that arrives during one waits until it ends.
  compileToolModule() {
    const compile = async () => {
      this.compiling = true;
      try {
        return await this.isolate.compileModule(this.sources.toolSource, {
          filename: `toolhost:///tools/${this.sources.toolName}.mjs`,
        });
      } finally {
        this.compiling = false;
        for (const module of this.releasesAfterCompile.splice(0)) releaseNow(module);
      }
    };
    const compiled = this.compileQueue.then(compile, compile);
    this.compileQueue = compiled.then(
      () => undefined,
      () => undefined,
    );
    return compiled;
  }

  releaseModule(module) {
    if (this.compiling) this.releasesAfterCompile.push(module);
    else releaseNow(module);
  }

  // Modules are bound to the context they are instantiated in, so the tool is
  // compiled again for each context (V8 reuses its parse); no cached data from
  // anywhere is ever passed to the compiler.
  async linkTool(context, handles) {
    let module;
    try {
      module = await this.compileToolModule();
    } catch (error) {
      if (this.isolate.isDisposed) throw error;
      return { loadError: `the tool module does not compile: ${describeCompileError(error)}` };
    }
    handles.push({ release: () => this.releaseModule(module) });
    if (module.dependencySpecifiers.length > 0) {
      return { loadError: 'the tool module imports other modules, which isolate tools cannot do' };
    }
    await module.instantiate(context, refuseImport);
    return { module };
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
