// The seam where the bubblewrap wrapper (sandbox-argv.ts) slots in front of a
// process tool's argv. Every process tool runs in its own pid namespace, in
// both isolation modes: when the namespace's init dies the kernel kills
// everything in it, the only thing that reaches descendants that left the
// process group (setsid, double fork). Fail closed: no working sandbox, no run.
import { recordSandboxStartWork } from '../../diagnostics/event-loop.js';
import { isHostError } from '../../errors.js';
import type { RunSpec } from '../types.js';
import { buildSandboxArgv } from '../bwrap/argv.js';
import { probeSandbox } from '../bwrap/probe.js';
import type { PidsCgroups } from '../bwrap/pids-cgroup.js';

export type SandboxArgv = { readonly ok: true; readonly argv: readonly string[] } | { readonly ok: false; readonly reason: string };

export interface SandboxArgvRequest {
  /** Absolute working directory (the first root, or a private directory). */
  readonly cwd: string;
  /** The call's timeout (sets the CPU limit); absent for a persistent process. */
  readonly timeoutMs?: number;
  /** A specific bubblewrap binary (a seam for tests and odd installs); default `bwrap` on PATH. */
  readonly bwrapPath?: string;
  /** The host's pids cgroups; default: those of callers without a host. */
  readonly cgroups?: PidsCgroups;
}

/** The full argv for a process tool (sandbox prefix + command), or why it cannot run isolated. */
export async function resolveSandboxArgv(spec: RunSpec, request: SandboxArgvRequest): Promise<SandboxArgv> {
  const command = spec.command ?? [];
  if (command.length === 0 || command[0] === '') return { ok: false, reason: 'the manifest has no command' };
  const bwrap = request.bwrapPath !== undefined ? { bwrapPath: request.bwrapPath } : {};
  const probe = await probeSandbox(bwrap);
  if (!probe.ok) return { ok: false, reason: probe.reason };
  let prefix: string[];
  const workStartedMs = performance.now();
  try {
    prefix = buildSandboxArgv(spec, {
      cwd: request.cwd,
      ...bwrap,
      ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
      ...(request.cgroups !== undefined ? { cgroups: request.cgroups } : {}),
    });
  } catch (error) {
    if (isHostError(error) && error.code === 'sandbox_unavailable') {
      const reason = error.details['reason'];
      return { ok: false, reason: typeof reason === 'string' ? reason : 'the sandbox cannot be built' };
    }
    throw error;
  } finally {
    recordSandboxStartWork(performance.now() - workStartedMs);
  }
  // No descriptor closer: tools are started by the spawner, which closed the host's inheritable ones.
  return { ok: true, argv: [...prefix, ...command] };
}
