// The seam where the bubblewrap wrapper slots in front of a process tool's argv.
// Every process tool runs in its own pid namespace, in both isolation modes:
// when the namespace's init dies the kernel kills everything in it, which is
// the only thing that reaches descendants that left the process group (setsid,
// double fork). Fail closed: no working bubblewrap, no run.
import { spawn } from 'node:child_process';
import type { RunSpec } from './runner.js';

export type SandboxArgv = { readonly ok: true; readonly argv: readonly string[] } | { readonly ok: false; readonly reason: string };

/** The full argv for a process tool (wrapper prefix + command), or why it cannot run isolated. */
export async function resolveSandboxArgv(spec: RunSpec, cwd: string): Promise<SandboxArgv> {
  const command = spec.command ?? [];
  if (command.length === 0) return { ok: false, reason: 'the manifest has no command' };
  if (spec.isolation === 'namespace') {
    // The full namespace sandbox comes from the sandbox module; until it is in
    // place, refuse rather than run with less isolation than declared.
    return { ok: false, reason: 'the namespace sandbox is not available in this build' };
  }
  const probe = await probeMinimalSandbox();
  if (!probe.ok) return probe;
  return { ok: true, argv: [...minimalPrefix(cwd), ...command] };
}

const BWRAP_PATH = '/usr/bin/bwrap';

// isolation: none still gets a pid namespace and --die-with-parent; the host
// filesystem stays visible as it is.
function minimalPrefix(cwd: string): string[] {
  return [BWRAP_PATH, '--unshare-pid', '--die-with-parent', '--dev-bind', '/', '/', '--proc', '/proc', '--chdir', cwd, '--'];
}

let cachedProbe: Promise<{ ok: true } | { ok: false; reason: string }> | undefined;

function probeMinimalSandbox(): Promise<{ ok: true } | { ok: false; reason: string }> {
  cachedProbe ??= new Promise((resolve) => {
    const child = spawn(BWRAP_PATH, [...minimalPrefix('/'), '/bin/true'], { stdio: 'ignore', env: {} });
    child.once('error', (error) => resolve({ ok: false, reason: `bubblewrap cannot start: ${error.message}` }));
    child.once('exit', (code) =>
      resolve(code === 0 ? { ok: true } : { ok: false, reason: `bubblewrap cannot create a pid namespace (exit ${String(code)})` }),
    );
  });
  return cachedProbe;
}
