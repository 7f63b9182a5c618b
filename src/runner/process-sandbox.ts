// The seam where the bubblewrap wrapper (sandbox-argv.ts) slots in front of a
// process tool's argv. Every process tool runs in its own pid namespace, in
// both isolation modes: when the namespace's init dies the kernel kills
// everything in it, the only thing that reaches descendants that left the
// process group (setsid, double fork). Fail closed: no working sandbox, no run.
import { access, constants } from 'node:fs/promises';
import { isHostError } from '../errors.js';
import type { RunSpec } from './runner.js';
import { CLOSE_INHERITED_FDS_ARGV, listInheritableDescriptors } from './inherited-fds.js';
import { buildSandboxArgv } from './sandbox-argv.js';
import { probeSandbox } from './sandbox-probe.js';

export type SandboxArgv = { readonly ok: true; readonly argv: readonly string[] } | { readonly ok: false; readonly reason: string };

export interface SandboxArgvRequest {
  /** Absolute working directory (the first root, or a private directory). */
  readonly cwd: string;
  /** The call's timeout (sets the CPU limit); absent for a persistent process. */
  readonly timeoutMs?: number;
  /** A specific bubblewrap binary (a seam for tests and odd installs); default `bwrap` on PATH. */
  readonly bwrapPath?: string;
}

/** The full argv for a process tool (sandbox prefix + command), or why it cannot run isolated. */
export async function resolveSandboxArgv(spec: RunSpec, request: SandboxArgvRequest): Promise<SandboxArgv> {
  const command = spec.command ?? [];
  if (command.length === 0 || command[0] === '') return { ok: false, reason: 'the manifest has no command' };
  const bwrap = request.bwrapPath !== undefined ? { bwrapPath: request.bwrapPath } : {};
  const probe = await probeSandbox(bwrap);
  if (!probe.ok) return { ok: false, reason: probe.reason };
  let prefix: string[];
  try {
    prefix = buildSandboxArgv(spec, { cwd: request.cwd, ...bwrap, ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}) });
  } catch (error) {
    if (isHostError(error) && error.code === 'sandbox_unavailable') {
      const reason = error.details['reason'];
      return { ok: false, reason: typeof reason === 'string' ? reason : 'the sandbox cannot be built' };
    }
    throw error;
  }
  const closer = await descriptorCloser();
  if (!closer.ok) return closer;
  return { ok: true, argv: [...prefix, ...closer.argv, ...command] };
}

// Only pay for the closer when the host really holds inheritable descriptors;
// when it does and the closer cannot run, refuse rather than leak them.
async function descriptorCloser(): Promise<SandboxArgv> {
  const inheritable = await listInheritableDescriptors();
  if (inheritable.length === 0) return { ok: true, argv: [] };
  const interpreter = CLOSE_INHERITED_FDS_ARGV[0] ?? '';
  try {
    await access(interpreter, constants.X_OK);
  } catch {
    return { ok: false, reason: `the host holds ${inheritable.length} inheritable descriptor(s) and ${interpreter}, which closes them in the sandbox, is missing` };
  }
  return { ok: true, argv: CLOSE_INHERITED_FDS_ARGV };
}
