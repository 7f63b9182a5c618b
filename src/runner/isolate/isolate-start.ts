// How the start of an isolate process ended, as the runner reads it. A start
// has two halves: loading what runs there (isolated-vm, the prelude, the tool's
// module compiled and linked: our code only), then running the tool module's
// top level ahead of any call. A failure in the first half is the sandbox's
// (`sandbox_unavailable`, with the reason); a process that ends in the second
// was ended by the tool's own top level, which is the tool's failure: its heap
// (`memory_limit`, recovery `repair`) or, without any sign of memory, a crash.
import type { Outcome } from '../tool-envelope.js';

/** A failed outcome. */
export type Failure = Extract<Outcome, { ok: false }>;

/** A start: ready, or why not; `verdict` when the tool's module itself made the start fail. */
export type IsolateStartResult = { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly verdict?: Failure };

/** Where a start is: loading our code, running the tool's top level ahead, or ready for calls. */
export type IsolateStartStage = 'loading' | 'top_level' | 'ready';

/** What the host saw of a process that ended while its tool's top level ran. */
interface TopLevelEnd {
  /** The end of the process's stderr (V8 writes its fatal out-of-memory report there). */
  readonly stderr: string;
  readonly signal: NodeJS.Signals | undefined;
  /** The host killed it (start timeout, close): no evidence of anything the tool did. */
  readonly killedByHost: boolean;
  readonly memoryMb: number;
}

// V8's fatal out-of-memory report ("Fatal JavaScript out of memory", "JavaScript heap out of
// memory", "<--- Last few GCs --->"), and isolated-vm's ("is_heap_oom") when it aborts on one.
export const OUT_OF_MEMORY = /out of memory|heap limit|Last few GCs|allocation failed|is_heap_oom/i;

/** The tool's failure when its module's top level ended the process. */
export function topLevelVerdict(end: TopLevelEnd): Failure {
  const isMemory =
    OUT_OF_MEMORY.test(end.stderr) ||
    // A SIGKILL the host did not send: the kernel's out-of-memory killer (the sandbox's memory cgroup).
    (end.signal === 'SIGKILL' && !end.killedByHost);
  if (isMemory) {
    return {
      ok: false,
      code: 'memory_limit',
      message: `The tool module's top level ran out of memory (its limit is ${end.memoryMb} MB) before the tool could run.`,
      details: { memoryMb: end.memoryMb, reason: 'top_level_out_of_memory' },
    };
  }
  return {
    ok: false,
    code: 'tool_crashed',
    message: "The tool module's top level crashed its isolate process before the tool could run.",
    details: { reason: 'top_level_crashed' },
  };
}
