// One isolate (a "generation") and the fresh contexts it hands out, one per
// call. Creating a context, loading the prelude and compiling and linking the
// tool module costs about a millisecond, so the next contexts are prepared
// ahead, after a call completes or when the generation is built, and a warm
// call only evaluates the module and calls the tool. The prelude is compiled
// once per isolate as a Script: each context runs it afresh (its own
// closures, nothing shared but immutable code), while V8 compiles the
// prelude's functions once instead of once per context.
import { reportCatastrophe } from './catastrophe.js';
import ivm from 'isolated-vm';
import type { Logger } from '../../log.js';
import type { HostDisposeReason } from './isolate-errors.js';

/** What the prelude and the tool module need to build a context. */
export interface ContextSources {
  readonly toolName: string;
  readonly preludeSource: string;
  readonly toolSource: string;
  readonly memoryMb: number;
  readonly runtimeOptions: {
    readonly maxPendingHostCalls: number;
    readonly maxOutputChars: number;
    readonly maxMessageChars: number;
    /** Progress and log events one call may send. */
    readonly maxEvents: number;
  };
}

/** The host callback a context forwards ctx calls to; null between calls. */
export type CtxDispatch = (id: unknown, op: unknown, args: unknown) => void;

/** A context ready for exactly one call. */
export interface PreparedContext {
  /** Routes this context's ctx calls to the call that owns it. */
  readonly binding: { dispatch: CtxDispatch | null };
  /** The prelude's runtime: `('run', namespace, args, callId)` → envelope; `('settle', id, ok, value)`. */
  readonly runtime: ivm.Reference<RuntimeFunction>;
  /** The tool module linked into this context, or why it could not be. */
  readonly tool: { readonly module: ivm.Module } | { readonly loadError: string };
  release(): void;
}

/** The one function the prelude exposes to the host (never to the tool). */
export type RuntimeFunction = (kind: 'run' | 'settle', a: unknown, b: unknown, c: unknown) => unknown;

const RUNTIME_OPTION_KEYS = ['maxPendingHostCalls', 'maxOutputChars', 'maxMessageChars', 'maxEvents'] as const;
const PRELUDE_EXPORT = 'export default function createToolRuntime(';

/**
 * The prelude module's text as the body of a closure: `$0` is the host
 * callback, `$1..$4` the runtime options. The file stays an ES module (so tsc
 * emits it unchanged and it can be read on its own); only its one export is
 * turned into a declaration.
 */
export function toPreludeClosure(preludeSource: string): string {
  const at = preludeSource.indexOf(PRELUDE_EXPORT);
  if (at < 0 || preludeSource.indexOf(PRELUDE_EXPORT, at + 1) >= 0) {
    throw new Error('the isolate prelude does not have exactly one createToolRuntime export');
  }
  const body = preludeSource.slice(0, at) + preludeSource.slice(at + 'export default '.length);
  return `'use strict';
${body}
const runtime = createToolRuntime($0, { maxPendingHostCalls: $1, maxOutputChars: $2, maxMessageChars: $3, maxEvents: $4 });
return (kind, a, b, c) => (kind === 'run' ? runtime.run(a, b, c) : runtime.settle(a, b, c));`;
}

/**
 * Contexts kept prepared per isolate. Two let back-to-back calls find one
 * ready while the next is built (building runs on the isolate's thread).
 */
export const SPARE_CONTEXTS = 2;

/** Calls between two looks at an isolate's heap. */
export const HEAP_CHECK_EVERY_CALLS = 16;
/** Share of the memory limit above which an isolate is replaced between calls. */
export const HEAP_REPLACE_FRACTION = 0.5;

/** Time a retired isolate gets to answer a probe before it is judged stuck in a loop. */
export const WEDGE_PROBE_MS = 200;
/** Bound on building the prelude's runtime (it only defines functions). */
const PRELUDE_EVAL_TIMEOUT_MS = 1000;

/** One isolate with its spare context; retired after a timeout or cancel, dead once disposed. */
export class IsolateGeneration {
  readonly isolate: ivm.Isolate;
  inFlight = 0;
  retired = false;
  hostDisposeReason: HostDisposeReason | undefined;
  private readonly spares: Array<Promise<PreparedContext>> = [];
  private readonly preludeClosure: string;
  private preludeScript: Promise<ivm.Script> | undefined;
  private compileQueue: Promise<void> = Promise.resolve();
  private compiling = false;
  private callsSinceHeapCheck = 0;
  private readonly memoryLimitMb: number;
  private readonly releasesAfterCompile: ivm.Module[] = [];

  constructor(
    private readonly sources: ContextSources,
    private readonly logger: Logger,
  ) {
    this.preludeClosure = toPreludeClosure(sources.preludeSource);
    this.memoryLimitMb = Math.max(8, sources.memoryMb);
    this.isolate = new ivm.Isolate({
      memoryLimit: this.memoryLimitMb,
      onCatastrophicError: (message: string) => {
        // V8 lost control of this isolate; isolated-vm quarantines it. Nothing in it is trusted again.
        this.logger.fatal({ tool: sources.toolName, message }, 'isolated-vm catastrophic error');
        this.retired = true;
        reportCatastrophe(message);
      },
    });
  }

  get isUsable(): boolean {
    return !this.retired && !this.isolate.isDisposed;
  }

  /** The oldest prepared spare if there is one, else a context prepared now. */
  async take(): Promise<PreparedContext> {
    return this.spares.shift() ?? this.prepare();
  }

  /** Starts preparing contexts in the background until SPARE_CONTEXTS are waiting. */
  refill(): void {
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
   * Whether released contexts have filled half the heap. V8 collects a
   * released context only in a late full collection, and isolated-vm's limit
   * can trip first: with a 16 MB limit an echo tool failed one innocent call in
   * about 140 with memory_limit. A crowded isolate is replaced between calls
   * instead (checked every HEAP_CHECK_EVERY_CALLS calls, off the call path).
   */
  async isCrowdedByGarbage(): Promise<boolean> {
    this.callsSinceHeapCheck += 1;
    if (this.callsSinceHeapCheck < HEAP_CHECK_EVERY_CALLS || !this.isUsable) return false;
    this.callsSinceHeapCheck = 0;
    const stats = await this.isolate.getHeapStatistics();
    return this.isUsable && stats.used_heap_size > HEAP_REPLACE_FRACTION * this.memoryLimitMb * 1024 * 1024;
  }

  /** Stops handing out contexts; disposes now if idle, else once stuck calls are proven stuck. */
  retire(): void {
    this.retired = true;
    this.dropSpare();
    if (this.isolate.isDisposed) return;
    if (this.inFlight === 0) {
      this.dispose('retired');
      return;
    }
    void this.probeOrDispose();
  }

  /** Called when a call ends; a retired generation goes away with its last call. */
  finishCall(): void {
    this.inFlight -= 1;
    if (this.retired && this.inFlight === 0) this.dispose('retired');
  }

  dispose(reason: HostDisposeReason): void {
    if (this.isolate.isDisposed) return;
    this.hostDisposeReason ??= reason;
    this.retired = true;
    this.dropSpare();
    try {
      this.isolate.dispose();
    } catch {
      // Already disposed by isolated-vm (memory limit) between the check and here.
    }
  }

  private dropSpare(): void {
    for (const spare of this.spares.splice(0)) spare.then((prepared) => prepared.release()).catch(() => {});
  }

  // Other calls still run here. A sync loop left behind by the stopped call
  // would block them forever; an isolate that cannot even create a context
  // within the probe window is stuck, and disposing it frees the CPU.
  private async probeOrDispose(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      this.isolate.createContext().then(
        (context) => {
          context.release();
          return true;
        },
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), WEDGE_PROBE_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!answered) {
      this.logger.warn({ tool: this.sources.toolName }, 'isolate stuck after a stopped call; disposing it');
      this.dispose('wedged');
    }
  }

  private async prepare(): Promise<PreparedContext> {
    const { isolate } = this;
    const context = await isolate.createContext();
    const handles: Array<{ release(): void }> = [];
    const binding: { dispatch: CtxDispatch | null } = { dispatch: null };
    const release = (): void => {
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
      const hostStart = new ivm.Callback(
        (id: unknown, op: unknown, args: unknown) => {
          binding.dispatch?.(id, op, args);
        },
        { ignored: true },
      );
      // Running the shared script yields this context's own runtime factory;
      // calling it builds the runtime around this context's host callback.
      this.preludeScript ??= isolate.compileScript(`(function ($0, $1, $2, $3, $4) {\n${this.preludeClosure}\n})`, {
        filename: 'toolhost:///prelude.mjs',
      });
      const script = await this.preludeScript;
      const factory = (await script.run(context, { reference: true, timeout: PRELUDE_EVAL_TIMEOUT_MS })) as ivm.Reference<
        (...args: unknown[]) => RuntimeFunction
      >;
      handles.push(factory);
      const runtime = (await factory.apply(
        undefined,
        [hostStart, ...RUNTIME_OPTION_KEYS.map((key) => this.sources.runtimeOptions[key])],
        { result: { reference: true }, timeout: PRELUDE_EVAL_TIMEOUT_MS },
      )) as ivm.Reference<RuntimeFunction>;
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
  // ours. The two at once corrupt it (a crash seen after a few thousand calls
  // once contexts were prepared while earlier ones were released). So compiles
  // run one at a time, and a release that arrives during one waits until it ends.
  private compileToolModule(): Promise<ivm.Module> {
    const compile = async (): Promise<ivm.Module> => {
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

  private releaseModule(module: ivm.Module): void {
    if (this.compiling) this.releasesAfterCompile.push(module);
    else releaseNow(module);
  }

  // Modules are bound to the context they are instantiated in, so the tool is
  // compiled again for each context (V8 reuses its parse); no cached data from
  // anywhere is ever passed to the compiler.
  private async linkTool(
    context: ivm.Context,
    handles: Array<{ release(): void }>,
  ): Promise<PreparedContext['tool']> {
    let module: ivm.Module;
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

/** Releases a module handle now (callers make sure no compile is running). */
function releaseNow(module: ivm.Module): void {
  try {
    module.release();
  } catch {
    // Released already, or the isolate is gone.
  }
}

function refuseImport(): never {
  throw new Error('isolate tools cannot import modules');
}

function describeCompileError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 500);
  return 'unknown error';
}
