// One runner per tool, created on its first call (so a host with many tools
// does not start pools it never uses) and closed together when the host closes.
import type { Runner, RunSpec } from '../runner/types.js';
import type { ToolView } from '../policy/types.js';

type RunnerFactory = (spec: RunSpec) => Runner;

export class RunnerCache {
  readonly #runners = new Map<string, Runner>();
  #closed = false;

  constructor(private readonly create: RunnerFactory) {}

  /** The tool's runner, created on first use. */
  get(view: ToolView): Runner {
    if (this.#closed) throw new Error('the runner cache is closed');
    const spec = view.runSpec;
    if (!spec) throw new Error(`tool ${view.manifest.name} has no run spec (excluded tools never reach run)`);
    let runner = this.#runners.get(spec.name);
    if (!runner) {
      runner = this.create(spec);
      this.#runners.set(spec.name, runner);
    }
    return runner;
  }

  /**
   * Builds the runners of `views` one after another, each once the previous one is ready
   * (its process up), so warming never takes both cores from the calls; stops when closed.
   */
  async warm(views: readonly ToolView[]): Promise<void> {
    for (const view of views) {
      if (this.#closed) return;
      await this.get(view).ready?.();
    }
  }

  /** Closes every runner (pools stopped, processes killed); idempotent. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const runners = [...this.#runners.values()];
    this.#runners.clear();
    await Promise.allSettled(runners.map((runner) => runner.close()));
  }
}
