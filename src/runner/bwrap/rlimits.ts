// Resource limits of one sandboxed process, and what applies them inside
// bubblewrap right before the tool's command is exec'd (so they bind the tool and
// everything it starts, never bubblewrap itself): the gate shell's own `ulimit`
// builtins where /bin/sh is dash, else a `prlimit` argv in front of the shell.
import type { RunSpec } from '../types.js';

/** Limits of one process tool; every field is a count or carries its unit. */
export interface SandboxLimits {
  /**
   * RLIMIT_AS: address space of each process, from the manifest's memoryMb. Undefined where
   * the kernel's memory controller holds the sandbox (sandbox-cgroups.ts): then no process has one.
   */
  readonly addressSpaceBytes: number | undefined;
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
const DEFAULT_FILE_SIZE_BYTES = 1024 * 1024 * 1024;
const DEFAULT_OPEN_FILES = 512;
/** Below the ~100 a fork bomb test starts, above what an interpreter with a few threads needs. */
export const DEFAULT_PROCESSES = 64;

/**
 * The limits for a spec: address space from memoryMb (or `addressSpaceMb`, a runtime's allowance
 * where RLIMIT_AS is the fallback), CPU from the call timeout (rounded up, plus a margin).
 */
export function computeSandboxLimits(
  spec: Pick<RunSpec, 'memoryMb'>,
  timeoutMs: number | undefined,
  overrides: SandboxLimitOverrides = {},
  addressSpaceMb: number = spec.memoryMb,
): SandboxLimits {
  const cpuFromTimeout = timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs > 0 ? Math.ceil(timeoutMs / 1000) + CPU_MARGIN_SECONDS : DEFAULT_CPU_SECONDS;
  return {
    addressSpaceBytes: requirePositiveInteger('memoryMb', addressSpaceMb) * 1024 * 1024,
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
    ...(limits.addressSpaceBytes === undefined ? [] : [`--as=${limits.addressSpaceBytes}`]),
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    ...(withProcessRlimit ? [`--nproc=${limits.processes}`] : []),
    '--',
  ];
}

/**
 * The same limits as the gate shell's own `ulimit` builtins, for dash (Debian's
 * /bin/sh): `[ulimit -v KiB &&] ulimit -t HARD && ulimit -S -t SOFT && ulimit -f BLOCKS
 * && ulimit -n N [&& ulimit -p N]`, applied before the shell joins the cgroup and
 * opens the gate, so they bind the tool as prlimit's did, without exec'ing prlimit
 * in every sandbox. dash counts -v in KiB and -f in 512-byte blocks: a limit that
 * is not a whole number of them gives undefined (prlimit then, which takes bytes).
 * Other shells' ulimit differs in units and letters (bash: -f in KiB outside POSIX
 * mode, -u for processes): only dash is asked for.
 */
export function buildDashUlimitScript(limits: SandboxLimits, withProcessRlimit: boolean): string | undefined {
  const addressSpace = limits.addressSpaceBytes;
  if ((addressSpace !== undefined && addressSpace % 1024 !== 0) || limits.fileSizeBytes % 512 !== 0) return undefined;
  return [
    ...(addressSpace === undefined ? [] : [`ulimit -v ${addressSpace / 1024}`]),
    // Both limits, then the soft one lower: SIGXCPU at the soft limit, SIGKILL one second later.
    `ulimit -t ${limits.cpuSeconds + 1}`,
    `ulimit -S -t ${limits.cpuSeconds}`,
    `ulimit -f ${limits.fileSizeBytes / 512}`,
    `ulimit -n ${limits.openFiles}`,
    ...(withProcessRlimit ? [`ulimit -p ${limits.processes}`] : []),
  ].join(' && ');
}

function requirePositiveInteger(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return Math.ceil(value);
}
