// One tool as `list --json` and `explain --json` print it. The field set is
// documented in docs/cli.md ("--json output") and only ever grows.
import { readToolDecision } from '../policy/tool-decision.js';
import type { ToolView } from '../policy/types.js';
import type { MemoryHold } from '../runner/index.js';

/**
 * How a tool's memoryMb is held on this machine: `cgroup` (the kernel's memory controller counts
 * what its sandbox uses: process tools, isolate processes, servers), `address_space` (the
 * RLIMIT_AS fallback where no memory controller can be used; `reason` says why), or `heap`
 * (a worker: V8's heap limit, in the host process).
 */
export interface ToolMemory {
  readonly heldBy: 'cgroup' | 'address_space' | 'heap';
  readonly cgroupVersion: 1 | 2 | null;
  readonly reason: string | null;
}

export interface ToolSummary {
  readonly name: string;
  /** The manifest file, relative to the working directory when inside it. */
  readonly file: string;
  /** null: unclassified. */
  readonly sideEffect: string | null;
  readonly mode: 'isolate' | 'worker' | 'process';
  /** process tools: none | namespace; null for isolate and worker. */
  readonly isolation: 'none' | 'namespace' | null;
  readonly trust: 'first_party' | 'community';
  readonly listed: boolean;
  readonly excluded: boolean;
  readonly decision: 'allow' | 'ask' | 'deny';
  /** deny only: policy_denied | unclassified_tool. */
  readonly code: string | null;
  /** The deciding rule (`file:line key` or `(built-in) key`); null for allow. */
  readonly rule: string | null;
  readonly reason: string | null;
  /** What a shadow-mode organisation file would decide, when stricter; else null. */
  readonly shadow: { readonly decision: 'ask' | 'deny'; readonly code: string | null; readonly rule: string; readonly reason: string } | null;
  readonly limits: { readonly timeoutMs: number; readonly maxResultBytes: number; readonly memoryMb: number };
  /** How limits.memoryMb is held here. */
  readonly memory: ToolMemory;
  /** A success completes the agent's run (SPEC 5.2). */
  readonly terminal: boolean;
  /**
   * A tool of an upstream server: the server, the tool's own name, the tools: entry, the server's
   * unverified hints, the server's `instances`, and whether a read_only class is enforced by the
   * operating system (false with `instances: one`; null for other classes); else null.
   */
  readonly upstream: {
    readonly server: string;
    readonly tool: string;
    readonly entry: string | null;
    readonly hints: Readonly<Record<string, unknown>> | null;
    readonly instances: 'split' | 'one';
    readonly readOnlyEnforced: boolean | null;
  } | null;
}

/** The fields of a summary, in output order (docs/cli.md documents each). */
export const TOOL_SUMMARY_FIELDS = [
  'name',
  'file',
  'sideEffect',
  'mode',
  'isolation',
  'trust',
  'listed',
  'excluded',
  'decision',
  'code',
  'rule',
  'reason',
  'shadow',
  'limits',
  'memory',
  'terminal',
  'upstream',
] as const satisfies readonly (keyof ToolSummary)[];

/** The summary of one tool view; `hold` is how this machine holds a sandbox's memory (sandbox-cgroups.ts). */
export function summarizeTool(view: ToolView, hold: MemoryHold): ToolSummary {
  const { manifest } = view;
  // The same decision a call to the tool meets in `serve` (policy/tool-decision.ts).
  const { effect, code, rule, reason, excluded, shadow } = readToolDecision(view);
  return {
    name: manifest.name,
    file: manifest.displayFile,
    sideEffect: manifest.sideEffect ?? null,
    mode: manifest.sandbox.mode,
    isolation: manifest.sandbox.mode === 'process' ? manifest.sandbox.isolation : null,
    trust: view.trust,
    listed: view.listed,
    excluded,
    decision: effect,
    code,
    rule,
    reason,
    shadow: shadow ? { decision: shadow.effect, code: shadow.effect === 'deny' ? shadow.code : null, rule: shadow.rule, reason: shadow.reason } : null,
    limits: { timeoutMs: view.limits.timeoutMs, maxResultBytes: view.limits.maxResultBytes, memoryMb: view.limits.memoryMb },
    memory: manifest.sandbox.mode === 'worker' ? { heldBy: 'heap', cgroupVersion: null, reason: null } : hold,
    terminal: manifest.terminal,
    upstream: manifest.upstream
      ? {
          server: manifest.upstream.server,
          tool: manifest.upstream.tool,
          entry: manifest.upstream.entry ?? null,
          hints: manifest.upstream.hints ?? null,
          instances: manifest.upstream.instances,
          readOnlyEnforced: manifest.sideEffect === 'read_only' ? isReadOnlyEnforced(manifest.upstream, manifest.networkAllow) : null,
        }
      : null,
  };
}

// With `instances: one` a read_only tool shares the instance with the declared access: the
// class is enforced only when that access is read-only anyway (no writable root, no network).
function isReadOnlyEnforced(upstream: NonNullable<ToolView['manifest']['upstream']>, networkAllow: readonly string[]): boolean {
  return upstream.instances === 'split' || (!upstream.hasWritableRoot && networkAllow.length === 0);
}

/** The class for people: `read_only (declared, not enforced)` where the operating system does not hold it. */
export function classLabel(summary: Pick<ToolSummary, 'sideEffect' | 'upstream'>): string {
  if (summary.sideEffect === null) return 'unclassified';
  return summary.upstream?.readOnlyEnforced === false ? `${summary.sideEffect} (declared, not enforced: instances: one)` : summary.sideEffect;
}

/** `isolate`, `worker`, `process` or `process+namespace`. */
export function sandboxLabel(summary: ToolSummary): string {
  return summary.isolation === 'namespace' ? 'process+namespace' : summary.mode;
}
