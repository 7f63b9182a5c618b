// Resource limits of one sandboxed process, and the `prlimit` argv that applies
// them inside bubblewrap, right before the tool's command is exec'd (so they
// bind the tool and everything it starts, never bubblewrap itself).
import type { RunSpec } from '../types.js';

/** Limits of one process tool; every field is a count or carries its unit. */
export interface SandboxLimits {
  /** RLIMIT_AS: address space of each process, from the manifest's memoryMb. */
  readonly addressSpaceBytes: number;
  /** RLIMIT_CPU: CPU seconds of each process (SIGXCPU at the limit, SIGKILL one second later). */
  readonly cpuSeconds: number;
  /** RLIMIT_FSIZE: largest file the tool may write (EFBIG / SIGXFSZ beyond). */
  readonly fileSizeBytes: number;
  /** RLIMIT_NOFILE: open descriptors per process. */
  readonly openFiles: number;
  /** Processes and threads in the sandbox (a pids cgroup; RLIMIT_NPROC in a user namespace too). */
  readonly processes: number;
}

/** Overrides a caller may pass; anything left out gets the defaults below. */
export type SandboxLimitOverrides = Partial<Omit<SandboxLimits, 'addressSpaceBytes'>>;

/**
 * CPU budget when the caller gives no timeout: a persistent process lives across
 * many calls, so its budget is a ceiling for the process's life, not one call.
 */
export const DEFAULT_CPU_SECONDS = 600;
/** Seconds added to a call's timeout: the wall-clock deadline should fire first. */
export const CPU_MARGIN_SECONDS = 2;
export const DEFAULT_FILE_SIZE_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_OPEN_FILES = 512;
/** Below the ~100 a fork bomb test starts, above what an interpreter with a few threads needs. */
export const DEFAULT_PROCESSES = 64;

/** The limits for a spec: address space from memoryMb, CPU from the call timeout (rounded up, plus a margin). */
export function computeSandboxLimits(
  spec: Pick<RunSpec, 'memoryMb'>,
  timeoutMs: number | undefined,
  overrides: SandboxLimitOverrides = {},
): SandboxLimits {
  const cpuFromTimeout =
    timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs > 0
      ? Math.ceil(timeoutMs / 1000) + CPU_MARGIN_SECONDS
      : DEFAULT_CPU_SECONDS;
  return {
    addressSpaceBytes: requirePositiveInteger('memoryMb', spec.memoryMb) * 1024 * 1024,
    cpuSeconds: requirePositiveInteger('cpuSeconds', overrides.cpuSeconds ?? cpuFromTimeout),
    fileSizeBytes: requirePositiveInteger('fileSizeBytes', overrides.fileSizeBytes ?? DEFAULT_FILE_SIZE_BYTES),
    openFiles: requirePositiveInteger('openFiles', overrides.openFiles ?? DEFAULT_OPEN_FILES),
    processes: requirePositiveInteger('processes', overrides.processes ?? DEFAULT_PROCESSES),
  };
}

/**
 * `prlimit --as=… --cpu=… --fsize=… --nofile=… [--nproc=…] --`: the command follows.
 * RLIMIT_NPROC counts every process of the user, and the kernel never enforces it
 * for host root: it is only passed inside a user namespace owned by a non-root
 * user, where the count is per sandbox. The pids cgroup is what holds for root.
 */
export function buildPrlimitArgv(prlimitPath: string, limits: SandboxLimits, withProcessRlimit: boolean): string[] {
  // CPU: soft limit sends SIGXCPU (terminates), the hard limit one second later SIGKILLs.
  return [
    prlimitPath,
    `--as=${limits.addressSpaceBytes}`,
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    ...(withProcessRlimit ? [`--nproc=${limits.processes}`] : []),
    '--',
  ];
}

function requirePositiveInteger(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return Math.ceil(value);
}
