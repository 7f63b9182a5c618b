// Fail closed: before a process tool runs, prove that bubblewrap exists and can
// really create the namespaces the sandbox uses. The runner maps ok:false to
// `sandbox_unavailable` with the reason, which always says what to do.
import { spawn } from 'node:child_process';
import { findBwrap, findPrlimit } from './binaries.js';
import { namespaceRunArgs, runBwrap, RUN_TIMEOUT_MS, tryNamespaces } from './bwrap-run.js';
import { explainNamespaceFailure, learnSandboxFeatures } from './features.js';
import type { SandboxFacts } from './sandbox-facts.js';
import { seccompProgram } from './seccomp.js';

type SandboxProbe = { readonly ok: true; readonly version: string } | { readonly ok: false; readonly reason: string };

/** Why a probe that bubblewrap did not finish (ended by a signal, or its timeout) is no verdict. */
const INTERRUPTED =
  'bubblewrap was ended by a signal or its 10 s timeout while the sandbox was probed (a busy or memory-starved machine?): retry the call, the next one probes again';

interface SandboxProbeOptions {
  /** Probe this bubblewrap instead of `bwrap` on PATH (a seam for tests and odd installs). */
  readonly bwrapPath?: string;
}

/**
 * Whether process tools can run sandboxed here: probed once per bubblewrap path
 * and host (its SandboxFacts; a host started after installing bubblewrap probes afresh).
 * A probe that bubblewrap did not finish says nothing about the machine: the call
 * that asked fails closed, and the next call probes again, instead of every
 * sandboxed tool failing for the host's life after one killed or starved probe.
 */
export function probeSandbox(facts: SandboxFacts, options: SandboxProbeOptions = {}): Promise<SandboxProbe> {
  const key = `probe\0${options.bwrapPath ?? ''}`;
  return facts.remember(key, async (): Promise<SandboxProbe> => {
    const probe = await runProbe(facts, options.bwrapPath);
    if (probe === 'interrupted') {
      facts.forget(key);
      return { ok: false, reason: INTERRUPTED };
    }
    return probe;
  });
}

/** `bwrap --version` → "0.8.0", or undefined when it cannot run. */
export async function readBwrapVersion(bwrapPath: string): Promise<string | undefined> {
  const version = await readVersion(bwrapPath);
  return version === 'interrupted' ? undefined : version;
}

async function readVersion(bwrapPath: string): Promise<string | undefined | 'interrupted'> {
  const result = await runBwrap(bwrapPath, ['--version']);
  if (!result.ok) return result.isInterrupted ? 'interrupted' : undefined;
  return /(\d+\.\d+(?:\.\d+)?)/.exec(result.stdout)?.[1] ?? (result.stdout.trim() || undefined);
}

/** The namespaces every process tool needs (isolation none needs the pid namespace; namespace needs all). */
const REQUIRED_NAMESPACE_FLAGS = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--die-with-parent', '--new-session'] as const;

export const INSTALL_BUBBLEWRAP = 'install bubblewrap: apt-get install bubblewrap (Fedora: dnf install bubblewrap)';

async function runProbe(facts: SandboxFacts, bwrapPath: string | undefined): Promise<SandboxProbe | 'interrupted'> {
  const bwrap = findBwrap(facts, bwrapPath);
  if (bwrap === undefined) {
    const where = bwrapPath === undefined ? 'bwrap is not on PATH' : `no executable bubblewrap at ${bwrapPath}`;
    return { ok: false, reason: `${where}: ${INSTALL_BUBBLEWRAP}` };
  }
  const version = await readVersion(bwrap);
  if (version === 'interrupted') return version;
  if (version === undefined) return { ok: false, reason: `${bwrap} --version failed: reinstall bubblewrap (${INSTALL_BUBBLEWRAP})` };
  if (findPrlimit(facts) === undefined) return { ok: false, reason: 'prlimit is not on PATH (resource limits): install util-linux: apt-get install util-linux' };
  // No --unshare-user here: root and a setuid bubblewrap need none, and an unprivileged
  // bubblewrap implies it; buildSandboxArgv adds it only where it works.
  const namespaces = await tryNamespaces(bwrap, REQUIRED_NAMESPACE_FLAGS);
  if (!namespaces.ok) return namespaces.isInterrupted ? 'interrupted' : { ok: false, reason: explainNamespaceFailure(namespaces.stderr) };
  // Namespaced tools never run without their filter: a bubblewrap or kernel that refuses it fails closed.
  // Beside it, what buildSandboxArgv will ask of this bubblewrap, learned without blocking the event loop.
  const [seccomp] = await Promise.all([trySeccomp(facts, bwrap), learnSandboxFeatures(facts, bwrap)]);
  if (seccomp === 'interrupted') return seccomp;
  if (!seccomp.ok) return { ok: false, reason: seccomp.reason };
  return { ok: true, version };
}

/** Runs `bwrap --seccomp 4 … true` with the host's filter on fd 4; ok:false says why it cannot be installed. */
function trySeccomp(facts: SandboxFacts, bwrapPath: string): Promise<{ ok: true } | { ok: false; reason: string } | 'interrupted'> {
  const program = seccompProgram(facts);
  if (!program.ok) return Promise.resolve({ ok: false, reason: program.reason });
  return new Promise((resolve) => {
    const args = namespaceRunArgs(['--seccomp', '4', '--unshare-pid', '--die-with-parent']);
    const child = spawn(bwrapPath, args, { env: {}, stdio: ['ignore', 'ignore', 'pipe', 'ignore', 'pipe'], timeout: RUN_TIMEOUT_MS });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(0, 500)));
    const fd4 = child.stdio[4] as NodeJS.WritableStream | null;
    fd4?.on('error', () => undefined);
    fd4?.end(program.bytes);
    child.once('error', (error) => resolve({ ok: false, reason: `bubblewrap could not start: ${error.message}` }));
    child.once('close', (code, signal) => {
      if (code === 0) resolve({ ok: true });
      else if (signal !== null) resolve('interrupted');
      else resolve({ ok: false, reason: `bubblewrap refused the seccomp filter (kernel without CONFIG_SECCOMP_FILTER?): ${stderr.trim() || `exit ${String(code)}`}` });
    });
  });
}
