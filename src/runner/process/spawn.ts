// Starting one process tool: its working directory, its environment and its
// descriptors. The fork happens in the spawner process (spawner-client.ts), not
// here: fork() from the host would stall its event loop for milliseconds per
// tool. Not execa either: we stream both pipes through our own byte counters
// and kill through kill.ts, so execa's buffering, maxBuffer and exit cleanup
// would be bypassed, and it costs about 3 ms per spawn.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { RunSpec } from '../types.js';
import { killProcessGroupNow, type ProcessGroups } from './kill.js';
import { SANDBOX_PRIVATE_TMP, sandboxFd4Input, sandboxFileInputs, START_LINE } from '../bwrap/argv.js';
import type { SandboxFacts } from '../bwrap/sandbox-facts.js';
import { readSandboxStatus } from '../bwrap/status.js';
import { addressBatch, addressSetupArgv, findNetworkSetup } from '../bwrap/sandbox-addresses.js';
import type { SpawnerExit, SpawnerService } from './spawner-client.js';

/** Where a process tool runs; `dispose` removes a private directory made for it. */
export interface Workdir {
  readonly cwd: string;
  /** True when `cwd` exists only inside the sandbox (made in its private /tmp): nothing of it is on the host. */
  readonly isInSandbox?: boolean;
  dispose(): Promise<void>;
}

/** How a spawned tool ended: exit code or signal of the wrapper, or a spawn error. */
export type ToolExit = SpawnerExit;

export interface SpawnedTool {
  /** Process-group id (the wrapper's pid); undefined when the spawn failed. */
  readonly pid: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the wrapper has exited (its output may still be unread). */
  readonly exited: Promise<ToolExit>;
  /** Settles when the wrapper has exited and both output pipes are closed. */
  readonly ended: Promise<ToolExit>;
}

/** The first workspace root, or a fresh private directory when the tool has none. */
export async function openWorkdir(spec: RunSpec): Promise<Workdir> {
  const firstRoot = spec.roots[0];
  if (firstRoot !== undefined) return { cwd: firstRoot.path, dispose: async () => undefined };
  const cwd = await mkdtemp(join(tmpdir(), 'toolhost-proc-'));
  return { cwd, dispose: () => removeWorkdir(cwd) };
}

/**
 * A namespaced tool's fresh private directory, made by bubblewrap in the sandbox's own
 * private /tmp (argv.ts, cwdInPrivateTmp) rather than on the host and bound in: no
 * mkdtemp and rmdir through the host's thread pool and no bind mount for every sandbox,
 * and it goes with the sandbox's tmpfs. Named afresh each time all the same.
 */
export function privateSandboxWorkdir(): Workdir {
  return { cwd: join(SANDBOX_PRIVATE_TMP, `toolhost-proc-${randomBytes(6).toString('hex')}`), isInSandbox: true, dispose: async () => undefined };
}

// Most tools leave their private directory empty: one rmdir, instead of the
// several round trips to the thread pool a recursive rm makes, on every call's path.
async function removeWorkdir(cwd: string): Promise<void> {
  try {
    await rmdir(cwd);
  } catch {
    await rm(cwd, { recursive: true, force: true, maxRetries: 2 });
  }
}

/**
 * The host's spawner, live-group set and machine facts (the seccomp filter) a
 * spawn goes through: a host's ProcessServices. Callers without a host (doctor,
 * scripts, tests) build one of their own and close it.
 */
export interface SpawnServices {
  readonly spawner: SpawnerService;
  readonly groups: ProcessGroups;
  readonly facts: SandboxFacts;
}

/** What the host sets up in a started sandbox before handing it back (its start gate still closed). */
export interface SandboxSetup {
  /** Address literals to add to the sandbox network namespace's loopback (sandbox-addresses.ts). */
  readonly loopbackAddresses?: readonly string[];
}

/**
 * Spawns `argv` in its own process group with exactly three pipes and `env` as
 * its whole environment, through the host's `services`, whose groups track it
 * until it has ended. A failed spawn gives a tool with no pid, empty output and
 * `ended` = spawn_failed; so does a sandbox whose `setup` failed (it is killed).
 */
export async function spawnTool(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string,
  services: SpawnServices,
  setup: SandboxSetup = {},
): Promise<SpawnedTool> {
  const [file, ...args] = argv;
  if (file === undefined) throw new TypeError('spawnTool needs a non-empty argv');
  // The whole environment, copied: never the host's (a secret there must stay invisible).
  const fd4 = sandboxFd4Input(services.facts, argv);
  const files = sandboxFileInputs(argv);
  const started = await services.spawner.spawn({ file, args, cwd, env: { ...env }, ...(fd4 === undefined ? {} : { fd4 }), ...(files.length === 0 ? {} : { files }) });
  if (!started.ok) return failedSpawn(started.errorCode);
  const { pid, stdin, stdout, stderr, status } = started.process;
  services.groups.track(pid);
  // bubblewrap's own report comes first; the spawner's covers a bubblewrap that was killed.
  const sandboxStatus = readSandboxStatus(status);
  const exited = Promise.race([
    sandboxStatus.exitCode.then((exitCode) => (exitCode === undefined ? started.process.exited : { kind: 'exited' as const, exitCode, signal: null })),
    started.process.exited,
  ]);
  const closed = (stream: Readable) => new Promise<void>((resolve) => (stream.closed ? resolve() : stream.once('close', () => resolve())));
  // Settles once the leader has exited and both output pipes are closed (all output read).
  const ended = Promise.all([exited, closed(stdout), closed(stderr)]).then(([exit]) => {
    services.groups.untrack(pid);
    stdin.destroy();
    return exit;
  });
  // A tool that exits without reading its input must not crash the host with EPIPE.
  stdin.on('error', () => undefined);
  stdout.on('error', () => undefined);
  stderr.on('error', () => undefined);
  const addresses = setup.loopbackAddresses ?? [];
  if (addresses.length > 0 && !(await addLoopbackAddresses(await sandboxStatus.childPid, addresses, services))) {
    // Without its addresses the sandbox would reach less than it was granted: it never starts.
    killProcessGroupNow(pid);
    await ended;
    return failedSpawn('network_setup_failed');
  }
  return { pid, stdin, stdout, stderr, exited, ended };
}

// Runs `ip -batch -` in the sandbox's network namespace (through the spawner, like every process of the host's).
async function addLoopbackAddresses(childPid: number | undefined, addresses: readonly string[], services: SpawnServices): Promise<boolean> {
  const tools = findNetworkSetup(services.facts);
  if (childPid === undefined || !tools.ok) return false;
  const [file, ...args] = addressSetupArgv(tools, childPid);
  if (file === undefined) return false;
  const started = await services.spawner.spawn({ file, args, cwd: '/', env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
  if (!started.ok) return false;
  const { stdin, stdout, stderr, status } = started.process;
  for (const stream of [stdout, stderr, status]) stream.on('error', () => undefined).resume();
  stdin.on('error', () => undefined);
  stdin.end(addressBatch(addresses));
  const exit = await started.process.exited;
  return exit.kind === 'exited' && exit.exitCode === 0;
}

function failedSpawn(errorCode: string): SpawnedTool {
  const empty = (): PassThrough => new PassThrough().end();
  const failed = Promise.resolve<ToolExit>({ kind: 'spawn_failed', errorCode });
  return { pid: undefined, stdin: new PassThrough(), stdout: empty(), stderr: empty(), exited: failed, ended: failed };
}

/** What `runToCompletion` saw: how the leader ended and all it wrote (as UTF-8). */
interface CompletedRun {
  readonly exit: ToolExit;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Spawns a sandbox argv (which waits at its start gate), opens the gate with
 * `input` behind START_LINE and collects everything it writes. For short checks
 * (`toolhost doctor`), not calls: no output cap, and SIGKILL after `timeoutMs`.
 */
export async function runToCompletion(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string,
  input: string,
  timeoutMs: number,
  services: SpawnServices,
): Promise<CompletedRun> {
  const tool = await spawnTool(argv, env, cwd, services);
  let stdout = '';
  let stderr = '';
  tool.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  tool.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => {
    if (tool.pid !== undefined) killProcessGroupNow(tool.pid);
  }, timeoutMs);
  tool.stdin.end(`${START_LINE}${input}`);
  try {
    return { exit: await tool.ended, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}
