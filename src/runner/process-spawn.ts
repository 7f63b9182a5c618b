// Starting one process tool: its working directory, its environment and its
// descriptors. Spawned with node:child_process rather than execa: we stream
// both pipes through our own byte counters and kill through kill.ts, so
// execa's buffering, maxBuffer and exit cleanup (skipped for detached
// children anyway) would be bypassed, and it costs about 3 ms per spawn on the
// hot path of every one-shot call.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunSpec } from './runner.js';
import { trackProcessGroup, untrackProcessGroup } from './kill.js';

/** Where a process tool runs; `dispose` removes a private directory made for it. */
export interface Workdir {
  readonly cwd: string;
  dispose(): Promise<void>;
}

/** How a spawned tool ended: exit code or signal of the wrapper, or a spawn error. */
export type ToolExit =
  | { readonly kind: 'exited'; readonly exitCode: number | null; readonly signal: NodeJS.Signals | null }
  | { readonly kind: 'spawn_failed'; readonly errorCode: string };

export interface SpawnedTool {
  readonly child: ChildProcessWithoutNullStreams;
  /** Process-group id (the wrapper's pid); undefined when the spawn failed. */
  readonly pid: number | undefined;
  /** Settles when the wrapper has exited and both output pipes are closed. */
  readonly ended: Promise<ToolExit>;
}

/** The first workspace root, or a fresh private directory when the tool has none. */
export async function openWorkdir(spec: RunSpec): Promise<Workdir> {
  const firstRoot = spec.roots[0];
  if (firstRoot !== undefined) return { cwd: firstRoot.path, dispose: async () => undefined };
  const cwd = await mkdtemp(join(tmpdir(), 'toolhost-proc-'));
  return { cwd, dispose: () => rm(cwd, { recursive: true, force: true, maxRetries: 2 }) };
}

/** Spawns `argv` in its own process group with exactly three pipes and `env` as its whole environment. */
export function spawnTool(argv: readonly string[], env: Readonly<Record<string, string>>, cwd: string): SpawnedTool {
  const [file, ...args] = argv;
  if (file === undefined) throw new TypeError('spawnTool needs a non-empty argv');
  const child = spawn(file, args, {
    cwd,
    // The whole environment, copied: never the host's (a secret there must stay invisible).
    env: { ...env },
    // Own process group, so the whole group can be signalled as -pid.
    detached: true,
    // Exactly fds 0-2; Node opens its other descriptors close-on-exec, so nothing else leaks.
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const pid = child.pid;
  if (pid !== undefined) trackProcessGroup(pid);
  const ended = new Promise<ToolExit>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) resolve({ kind: 'spawn_failed', errorCode: error.code ?? 'unknown' });
    });
    child.once('close', (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (pid !== undefined) untrackProcessGroup(pid);
      resolve({ kind: 'exited', exitCode, signal });
    });
  });
  // A tool that exits without reading its input must not crash the host with EPIPE.
  child.stdin.on('error', () => undefined);
  return { child, pid, ended };
}
