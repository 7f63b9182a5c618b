// Running bubblewrap once to learn something (its version, whether it can make
// some namespaces), with an empty environment and a timeout: the sandbox probe,
// the feature detection it learns beside it, and `toolhost doctor` ask this way.
// A run ended by a signal (the timeout's included) is told apart from one that
// bubblewrap failed on its own: it says nothing about the machine.
import { execFile } from 'node:child_process';

/** What one run of bubblewrap answered: its stdout, or its stderr and whether a signal ended it. */
type BwrapRun = { ok: true; stdout: string } | { ok: false; stderr: string; isInterrupted: boolean };

/** What a namespace run answered: exit 0, or bubblewrap's stderr and whether a signal ended it. */
export type NamespaceOutcome = { ok: true } | { ok: false; stderr: string; isInterrupted: boolean };

/** How long one run may take before it is ended (and counted as interrupted). */
export const RUN_TIMEOUT_MS = 10_000;

/** The argv after `bwrap` of a run of `true` under `flags` (its namespaces, a seccomp filter), on the host's own root, read-only. */
export function namespaceRunArgs(flags: readonly string[]): string[] {
  return [...flags, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true'];
}

/** Runs `bwrapPath <args>` with an empty environment and a 10 s timeout. */
export function runBwrap(bwrapPath: string, args: readonly string[]): Promise<BwrapRun> {
  return new Promise((resolve) => {
    execFile(bwrapPath, [...args], { env: {}, timeout: RUN_TIMEOUT_MS, encoding: 'utf8', maxBuffer: 64 * 1024 }, (error, stdout, stderr) => {
      if (error === null) resolve({ ok: true, stdout });
      // A signal (the timeout's included) ended it: no answer from bubblewrap itself.
      else resolve({ ok: false, stderr: (stderr.trim() || error.message).slice(0, 500), isInterrupted: typeof error.signal === 'string' });
    });
  });
}

/** Runs `bwrap <flags> -- true` (namespaceRunArgs); ok:false carries bubblewrap's stderr, and whether a signal ended it. */
export async function tryNamespaces(bwrapPath: string, flags: readonly string[]): Promise<NamespaceOutcome> {
  const result = await runBwrap(bwrapPath, namespaceRunArgs(flags));
  return result.ok ? { ok: true } : { ok: false, stderr: result.stderr, isInterrupted: result.isInterrupted };
}
