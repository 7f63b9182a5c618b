// One isolate (a "generation") and the fresh contexts it hands out, one per
// call. Creating a context, loading the prelude and compiling and linking the
// tool module costs about a millisecond, so the next context is prepared ahead,
// after a call completes or when the generation is built, and a warm call only
// evaluates the module and calls the tool.
import ivm from 'isolated-vm';
import type { Logger } from '../log.js';
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
  };
}

/** The host callback a context forwards ctx calls to; null between calls. */
export type CtxDispatch = (id: unknown, op: unknown, args: unknown) => void;

/** A context ready for exactly one call. */
export interface PreparedContext {
  /** Routes this context's ctx calls to the call that owns it. */
  readonly binding: { dispatch: CtxDispatch | null };
  readonly run: ivm.Reference;
  readonly settle: ivm.Reference;
  /** The tool module linked into this context, or why it could not be. */
  readonly tool: { readonly module: ivm.Module } | { readonly loadError: string };
  release(): void;
}

/** Time a retired isolate gets to answer a probe before it is judged stuck in a loop. */
export const WEDGE_PROBE_MS = 200;
/** Bound on the prelude's own module evaluation (it only defines functions). */
const PRELUDE_EVAL_TIMEOUT_MS = 1000;

/** One isolate with its spare context; retired after a timeout or cancel, dead once disposed. */
export class IsolateGeneration {
  readonly isolate: ivm.Isolate;
  inFlight = 0;
  retired = false;
  hostDisposeReason: HostDisposeReason | undefined;
  private spare: Promise<PreparedContext> | undefined;

  constructor(
    private readonly sources: ContextSources,
    private readonly logger: Logger,
  ) {
    this.isolate = new ivm.Isolate({
      memoryLimit: Math.max(8, sources.memoryMb),
      onCatastrophicError: (message: string) => {
        // V8 lost control of this isolate; isolated-vm quarantines it. Nothing in it is trusted again.
        this.logger.fatal({ tool: sources.toolName, message }, 'isolated-vm catastrophic error');
        this.retired = true;
      },
    });
  }

  get isUsable(): boolean {
    return !this.retired && !this.isolate.isDisposed;
  }

  /** The prepared spare if there is one, else a context prepared now. */
  async take(): Promise<PreparedContext> {
    const spare = this.spare;
    this.spare = undefined;
    return spare ?? this.prepare();
  }

  /** Starts preparing the next context in the background, if none is waiting. */
  refill(): void {
    if (this.spare !== undefined || !this.isUsable) return;
    const spare = this.prepare();
    // A failed spare is dropped; the next call prepares its own and reports the failure.
    spare.catch(() => {
      if (this.spare === spare) this.spare = undefined;
    });
    this.spare = spare;
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
    const spare = this.spare;
    this.spare = undefined;
    spare?.then((prepared) => prepared.release()).catch(() => {});
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
      const prelude = await isolate.compileModule(this.sources.preludeSource, { filename: 'toolhost:///prelude.mjs' });
      handles.push(prelude);
      await prelude.instantiate(context, refuseImport);
      await prelude.evaluate({ timeout: PRELUDE_EVAL_TIMEOUT_MS });
      const factory = await prelude.namespace.get('default', { reference: true });
      handles.push(factory);
      // The callback turns into a plain function inside the isolate; its arguments arrive here as copies.
      const hostStart = new ivm.Callback(
        (id: unknown, op: unknown, args: unknown) => {
          binding.dispatch?.(id, op, args);
        },
        { ignored: true },
      );
      const runtime = (await factory.apply(
        undefined,
        [hostStart, new ivm.ExternalCopy(this.sources.runtimeOptions).copyInto({ release: true })],
        { result: { reference: true }, timeout: PRELUDE_EVAL_TIMEOUT_MS },
      )) as ivm.Reference<{ run: unknown; settle: unknown }>;
      handles.push(runtime);
      const run = await runtime.get('run', { reference: true });
      handles.push(run);
      const settle = await runtime.get('settle', { reference: true });
      handles.push(settle);
      const tool = await this.linkTool(context, handles);
      return { binding, run, settle, tool, release };
    } catch (error) {
      release();
      throw error;
    }
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
      module = await this.isolate.compileModule(this.sources.toolSource, {
        filename: `toolhost:///tools/${this.sources.toolName}.mjs`,
      });
    } catch (error) {
      if (this.isolate.isDisposed) throw error;
      return { loadError: `the tool module does not compile: ${describeCompileError(error)}` };
    }
    handles.push(module);
    if (module.dependencySpecifiers.length > 0) {
      return { loadError: 'the tool module imports other modules, which isolate tools cannot do' };
    }
    await module.instantiate(context, refuseImport);
    return { module };
  }
}

function refuseImport(): never {
  throw new Error('isolate tools cannot import modules');
}

function describeCompileError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 500);
  return 'unknown error';
}
