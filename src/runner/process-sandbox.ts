// The seam where the bubblewrap wrapper slots in front of a process tool's argv.
// Every process tool runs in its own pid namespace, in both isolation modes:
// when the namespace's init dies the kernel kills everything in it, which is
// the only thing that reaches descendants that left the process group (setsid,
// double fork). Fail closed: no working bubblewrap, no run.
import { spawn } from 'node:child_process';
import type { RunSpec } from './runner.js';
import { CLOSE_INHERITED_FDS_ARGV, listInheritableDescriptors } from './inherited-fds.js';

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
  return { ok: true, argv: [...minimalPrefix(cwd), ...(await descriptorCloser()), ...command] };
}

const BWRAP_PATH = '/usr/bin/bwrap';

// Only pay for the closer when the host really holds inheritable descriptors.
async function descriptorCloser(): Promise<readonly string[]> {
  return (await listInheritableDescriptors()).length > 0 ? CLOSE_INHERITED_FDS_ARGV : [];
}

// isolation: none still gets a pid namespace and --die-with-parent; the host
// filesystem stays visible as it is.
function minimalPrefix(cwd: string): string[] {
  return [BWRAP_PATH, '--unshare-pid', '--die-with-parent', '--dev-bind', '/', '/', '--proc', '/proc', '--chdir', cwd, '--'];
}

let cachedProbe: Promise<{ ok: true } | { ok: false; reason: string }> | undefined;

function probeMinimalSandbox(): Promise<{ ok: true } | { ok: false; reason: string }> {
  cachedProbe ??= new Promise((resolve) => {
    const child = spawn(BWRAP_PATH, [...minimalPrefix('/').slice(1), '/bin/true'], { stdio: ['ignore', 'ignore', 'pipe'], env: {} });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-512);
    });
    child.once('error', (error) => resolve({ ok: false, reason: `bubblewrap cannot start: ${error.message}` }));
    child.once('close', (code) =>
      resolve(code === 0 ? { ok: true } : { ok: false, reason: `bubblewrap cannot create a pid namespace: ${stderr.trim() || `exit ${String(code)}`}` }),
    );
  });
  return cachedProbe;
}
