// The bubblewrap command line in front of every process tool (SPEC section 3).
// Both isolation modes get a pid namespace (killing bwrap kills every
// descendant, setsid'd or not), --die-with-parent, a new session (no TIOCSTI
// terminal injection), an environment of exactly spec.env, and resource limits
// (the gate shell's ulimit, or prlimit, plus a cgroup holding the process count and the memory, joined
// before the tool starts; RLIMIT_AS only where no memory controller can be used). `namespace` adds
// ipc/uts/cgroup/user/net namespaces (with a non-empty networkAllow, the only
// way out is the host's egress proxy, through a bridge started by the gate: its
// HTTP proxy, and a listener per allowed destination for ordinary clients,
// whose names a generated /etc/hosts maps to them),
// a seccomp filter (seccomp.ts),
// a read-only view of the system directories, the roots at their host paths
// with their access, the manifest folder read-only, the host's own manifests,
// policies and state read-only or hidden (sandbox-guard.ts), a private /tmp,
// and no /root, /home or secret files from /etc.
import { accessSync, constants, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import { HostError } from '../../errors.js';
import type { CgroupLimits, SandboxCgroup, SandboxCgroups } from './sandbox-cgroups.js';
import { buildDashUlimitScript, buildPrlimitArgv, computeSandboxLimits, type SandboxLimitOverrides, type SandboxLimits } from './rlimits.js';
import type { RunSpec } from '../types.js';
import { bwrapSupports, findBwrap, findExecutable, findPrlimit } from './binaries.js';
import { isPathInside, resolveCommandMounts } from './command.js';
import { detectSandboxFeatures } from './features.js';
import { guardHostFiles, type SandboxBinds } from './guard.js';
import type { SandboxFacts } from './sandbox-facts.js';
import { seccompProgram } from './seccomp.js';
import { bridgeProcessCount, bridgeScript, egressEnv, SANDBOX_EGRESS_DIR } from './egress-bridge.js';
import type { EgressNetworkPlan } from './egress-network.js';
import { findNetworkSetup } from './sandbox-addresses.js';

/** What building a sandbox goes through: the host's sandbox cgroups and what it knows of the machine (its ProcessServices). */
export interface SandboxArgvServices {
  readonly cgroups: SandboxCgroups;
  readonly facts: SandboxFacts;
}

export interface SandboxArgvOptions {
  /** The host's (process-services.ts): the call's cgroup is made there, machine facts are learned there. */
  readonly services: SandboxArgvServices;
  /** Absolute working directory of the tool (the first root, or a fresh private directory). */
  readonly cwd: string;
  /** namespace: a host directory to show as /tmp (read-write); default a fresh tmpfs. Ignored by isolation none. */
  readonly privateTmp?: string;
  /**
   * namespace: `cwd` lies under the sandbox's private /tmp and is made there (bubblewrap --dir),
   * so no host directory is bound for it. Ignored by isolation none, whose cwd is the host's.
   */
  readonly cwdInPrivateTmp?: boolean;
  /** The call's timeout: the CPU limit is it, rounded up to seconds, plus a margin. Absent (a persistent process): DEFAULT_CPU_SECONDS. */
  readonly timeoutMs?: number;
  /** Limits other than memory (which comes from spec.memoryMb). */
  readonly limits?: SandboxLimitOverrides;
  /**
   * The address-space cap (RLIMIT_AS), in MiB, where no memory controller holds the sandbox;
   * default spec.memoryMb. A runtime that reserves more than it uses (Node) needs an allowance
   * above its memoryMb there; the memory cgroup counts only what is used.
   */
  readonly addressSpaceMb?: number;
  /** A specific bubblewrap binary (a seam for tests and odd installs); default `bwrap` on PATH. */
  readonly bwrapPath?: string;
  /** The process's cgroup, made beforehand off the event loop (SandboxCgroups.createAsync with sandboxCgroupLimits); absent: made here from services.cgroups. */
  readonly cgroup?: SandboxCgroup;
  /**
   * namespace with a non-empty networkAllow: the process's egress grant (egress-grant.ts), whose
   * folder is bound in read-only: its proxy socket, bridged to a loopback port named by
   * HTTP_PROXY, and with `network` a socket per allowed destination, bridged to a listener where
   * ordinary clients connect, and the sandbox's /etc/hosts. Absent: no network at all (fail
   * closed). Ignored by isolation none, which shares the host's network.
   */
  readonly egress?: SandboxEgress;
}

/** What of an egress grant the sandbox is built with: its folder, and its direct listeners (a process tool's or a server's). */
export interface SandboxEgress {
  readonly dir: string;
  readonly network?: EgressNetworkPlan | undefined;
}

/** The namespace sandbox's private /tmp (a fresh tmpfs, or opts.privateTmp). */
export const SANDBOX_PRIVATE_TMP = '/tmp';
/** PATH inside the sandbox when spec.env has none: execvp's fallback would omit /usr/local/bin. */
export const SANDBOX_DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
/**
 * The sandbox waits, fully set up, until the host writes START_LINE on its stdin, then
 * execs the tool, which reads the rest of stdin. A sandbox can so be started before its
 * call (off the call's path) without any tool code running early. `read` takes stdin one
 * byte at a time up to the newline; at end of input without one the tool never runs.
 */
export const START_LINE = '\n';
const START_GATE_SCRIPT = 'read -r start && exec "$@"';
/** bubblewrap's --json-status-fd: never visible to the tool, which bubblewrap starts without it. */
const SANDBOX_STATUS_FD = 3;
/** bubblewrap's --seccomp: the spawner writes the program into this descriptor (see sandboxFd4Input). */
export const SANDBOX_SECCOMP_FD = 4;
/**
 * bubblewrap's --file: the allowlisted /etc files copied into the sandbox's root read their
 * content from descriptors numbered from here up, opened by the spawner (see sandboxFileInputs).
 */
export const SANDBOX_FILE_FD_BASE = 5;
/** An allowlisted /etc file larger than this is bind-mounted instead of copied. */
export const ETC_COPY_MAX_BYTES = 256 * 1024;
/** Where the sandbox sees its cgroup's `cgroup.procs` (namespace mode); a second hierarchy's (cgroup v1) is `cgroup-1.procs`. */
const SANDBOX_CGROUP_PROCS_PATH = '/run/toolhost/cgroup.procs';
const SANDBOX_HOSTNAME = 'toolhost-sandbox';
/** Size cap of the private /tmp and /dev/shm tmpfs mounts (namespace mode). */
export const PRIVATE_TMPFS_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The argv prefix to put before spec.command: `bwrap …flags… -- sh -c <limits, [join cgroup,] start gate>`
 * (with a /bin/sh other than dash: `bwrap …flags… -- prlimit …limits… -- sh -c <[join cgroup,] start gate>`).
 * Throws `sandbox_unavailable` when bubblewrap or prlimit cannot be found: never a run without isolation.
 * Creates the call's cgroup (when the host has one and opts.cgroup brings none) as a side effect; empty ones are swept later.
 */
export function buildSandboxArgv(spec: RunSpec, opts: SandboxArgvOptions): string[] {
  const program = spec.command?.[0];
  if (program === undefined || program === '') throw new TypeError(`tool ${spec.name} has no command`);
  if (!isAbsolute(opts.cwd)) throw new TypeError(`cwd must be absolute: ${opts.cwd}`);
  const isolated = spec.isolation === 'namespace';
  const cwdInside = isolated && opts.cwdInPrivateTmp === true;
  if (cwdInside && (!isPathInside(opts.cwd, SANDBOX_PRIVATE_TMP) || opts.cwd === SANDBOX_PRIVATE_TMP || opts.cwd !== resolve(opts.cwd))) {
    throw new TypeError(`a cwd made in the private /tmp must be a plain path below it: ${opts.cwd}`);
  }
  const { facts, cgroups } = opts.services;
  const bwrap = findBwrap(facts, opts.bwrapPath);
  if (bwrap === undefined) throw unavailable('bubblewrap is not installed', 'install bubblewrap: apt-get install bubblewrap');
  const prlimit = findPrlimit(facts);
  if (prlimit === undefined) throw unavailable('prlimit is not installed', 'install util-linux: apt-get install util-linux');

  const egress = isolated && spec.networkAllow.length > 0 ? opts.egress : undefined;
  const socat = egress === undefined ? undefined : findExecutable('socat');
  if (egress !== undefined && socat === undefined) throw unavailable('socat is not installed (the egress bridge)', 'install socat: apt-get install socat');
  const direct = egress?.network?.listeners ?? [];
  // Addresses the host adds to the namespace's loopback need nsenter and ip there (sandbox-addresses.ts).
  if ((egress?.network?.addedAddresses.length ?? 0) > 0) {
    const setup = findNetworkSetup(facts);
    if (!setup.ok) throw unavailable(setup.reason, setup.fix);
  }
  // The proxy variables win over any the tool's env passes through: they are the only way out.
  const env = { ...sandboxEnv(spec.env), ...(isolated ? homeEnv(spec.env) : {}), ...(egress === undefined ? {} : egressEnv()) };
  const toolLimits = computeSandboxLimits(spec, opts.timeoutMs, opts.limits, opts.addressSpaceMb);
  // The bridge's idle listeners count among the sandbox's processes: the tool keeps its own allowance.
  const computed = egress === undefined ? toolLimits : { ...toolLimits, processes: toolLimits.processes + bridgeProcessCount(direct) };
  const features = detectSandboxFeatures(facts, bwrap);
  if (isolated && features.isInterrupted === true) {
    throw unavailable('bubblewrap did not answer while its features were probed (ended by a signal or its timeout)', 'retry the call: the next one probes again');
  }
  // A namespaced tool never runs without its seccomp filter (SPEC section 3.3).
  const seccomp = isolated ? seccompProgram(facts) : undefined;
  if (seccomp?.ok === false) throw unavailable('no seccomp filter', seccomp.reason);
  // Everything that can throw comes before the cgroup is made, so a failure leaves none behind.
  const mounts = isolated ? pathMounts(facts, spec, cwdInside ? undefined : opts.cwd, env['PATH'] ?? SANDBOX_DEFAULT_PATH) : [];
  const cgroup = opts.cgroup ?? cgroups.create(sandboxCgroupLimits(spec, toolLimits, egress));
  // The memory controller holds memoryMb where it can: no address-space cap then (SPEC section 3, Memory).
  const limits: SandboxLimits = cgroup?.memoryBytes === undefined ? computed : { ...computed, addressSpaceBytes: undefined };
  // cgroup v2 refuses to move a process to a cgroup outside its cgroup namespace: keep the host's then.
  const unshareCgroup = cgroup?.hasV2 !== true;
  const argv = [bwrap, ...(isolated ? namespaceFlags(features, unshareCgroup, outerUsernsNeeds(egress?.network)) : []), '--unshare-pid', '--die-with-parent', '--new-session'];
  // bubblewrap writes the tool's exit code there (the spawner gives every process an fd 3 pipe).
  argv.push('--json-status-fd', String(SANDBOX_STATUS_FD));
  // bubblewrap installs it last, just before it execs the command (after its own mounts).
  if (seccomp !== undefined) argv.push('--seccomp', String(SANDBOX_SECCOMP_FD));

  if (isolated) {
    // tmpfs pages are host memory that RLIMIT_AS does not count: cap /tmp and /dev/shm.
    const tmpfsSize = bwrapSupports(facts, bwrap, '--size') ? ['--size', String(PRIVATE_TMPFS_MAX_BYTES)] : [];
    // bubblewrap covers /proc/sys and /proc/sysrq-trigger only when it cannot write them, and
    // a root-mapped user passes test_perm on global sysctls: the whole /proc goes read-only.
    argv.push(...systemMounts(facts, bwrapSupports(facts, bwrap, '--perms')), '--proc', '/proc', '--remount-ro', '/proc', '--dev', '/dev', ...tmpfsSize, '--tmpfs', '/dev/shm');
    argv.push(...(opts.privateTmp !== undefined ? ['--bind', opts.privateTmp, SANDBOX_PRIVATE_TMP] : [...tmpfsSize, '--tmpfs', SANDBOX_PRIVATE_TMP]));
    if (cwdInside) argv.push('--dir', opts.cwd);
    // Programs that keep scratch files in /var/tmp find the same capped /tmp (a link, not a mount).
    argv.push('--symlink', '../tmp', '/var/tmp');
    argv.push(...mounts);
    cgroup?.procsPaths.forEach((procsPath, index) => argv.push('--bind', procsPath, sandboxProcsPath(index)));
    if (egress !== undefined) argv.push('--ro-bind', egress.dir, SANDBOX_EGRESS_DIR);
    // Allowed names at their listeners' loopback addresses; nothing else resolves (DNS has no route).
    if (egress?.network !== undefined) argv.push('--ro-bind', `${egress.dir}/hosts`, '/etc/hosts');
    // The root is bwrap's own tmpfs: read-only, so stray writes fail instead of vanishing.
    argv.push('--remount-ro', '/');
  } else {
    // isolation none: the host filesystem as it is; new /proc for the new pid namespace.
    argv.push('--dev-bind', '/', '/', '--proc', '/proc', '--dev', '/dev');
  }
  argv.push('--chdir', opts.cwd, '--clearenv');
  for (const [name, value] of Object.entries(env)) argv.push('--setenv', name, value);
  argv.push('--');
  // RLIMIT_NPROC only means "per sandbox" inside a user namespace, and never binds root.
  const nprocApplies = isolated && features.userNamespace && process.getuid?.() !== 0;
  const shell = shellPath(facts);
  // The limits are set by the gate shell's own builtins where it is dash (one exec fewer in
  // every sandbox), else by prlimit in front of it; either way before any tool code runs.
  const ulimits = basename(shell) === 'dash' ? buildDashUlimitScript(limits, nprocApplies) : undefined;
  if (ulimits === undefined) argv.push(...buildPrlimitArgv(prlimit, limits, nprocApplies));
  const limited = ulimits === undefined ? '' : `${ulimits} && `;
  // Then the start gate (and the cgroup join, then the egress bridge): if a limit cannot be set,
  // joining fails or the bridge does not come up, the tool never starts (fail closed).
  const bridge = socat === undefined ? '' : `{ ${bridgeScript(socat, direct)}; } && `;
  const joins = (cgroup?.procsPaths ?? []).map((procsPath, index) => `echo 0 > ${shellWord(isolated ? sandboxProcsPath(index) : procsPath)} && `).join('');
  argv.push(shell, '-c', `${limited}${joins}${bridge}${START_GATE_SCRIPT}`, 'toolhost-gate');
  return argv;
}

/**
 * What a sandbox's cgroup holds it to: its process count (with the egress bridge's listeners,
 * when it has a grant) and, in bytes, its memoryMb.
 */
export function sandboxCgroupLimits(spec: Pick<RunSpec, 'memoryMb'>, limits: Pick<SandboxLimits, 'processes'>, egress?: SandboxEgress): CgroupLimits {
  const bridge = egress === undefined ? 0 : bridgeProcessCount(egress.network?.listeners ?? []);
  return { processes: limits.processes + bridge, memoryBytes: spec.memoryMb * 1024 * 1024 };
}

// The first hierarchy's cgroup.procs at SANDBOX_CGROUP_PROCS_PATH, a second one's beside it.
function sandboxProcsPath(index: number): string {
  return index === 0 ? SANDBOX_CGROUP_PROCS_PATH : SANDBOX_CGROUP_PROCS_PATH.replace(/\.procs$/, `-${index}.procs`);
}

// A path written into the gate script: ours (a cgroup folder), so only plain characters.
function shellWord(path: string): string {
  if (!/^[A-Za-z0-9_./-]+$/.test(path)) throw new TypeError(`not a plain path for the sandbox's gate: ${path}`);
  return path;
}

/**
 * What a process started with `argv` must read on fd 4: the seccomp program when
 * the argv is bubblewrap's and asks for it there (`--seccomp 4` before `--`).
 * spawnTool calls this, so every caller of buildSandboxArgv gets the filter.
 */
export function sandboxFd4Input(facts: SandboxFacts, argv: readonly string[]): Uint8Array | undefined {
  const end = argv.indexOf('--');
  const flags = end === -1 ? argv : argv.slice(0, end);
  const at = flags.indexOf('--seccomp');
  if (at === -1 || flags[at + 1] !== String(SANDBOX_SECCOMP_FD)) return undefined;
  const program = seccompProgram(facts);
  if (!program.ok) throw unavailable('no seccomp filter', program.reason);
  return program.bytes;
}

/**
 * The host files a process started with `argv` must find open on descriptors
 * SANDBOX_FILE_FD_BASE, +1, …: the sources of bubblewrap's `--file FD DEST` flags
 * before `--`, each the allowlisted /etc file at DEST (computeSystemMounts only
 * copies a file to its own path). spawnTool calls this, so every caller of
 * buildSandboxArgv gets them. Anything else (a fd out of sequence, a path off the
 * allowlist) throws: the host opens no other file for a sandbox.
 */
export function sandboxFileInputs(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf('--');
  const paths: string[] = [];
  for (let at = argv.indexOf('--file'); at !== -1 && (end === -1 || at < end); at = argv.indexOf('--file', at + 3)) {
    const fd = argv[at + 1];
    const path = argv[at + 2] ?? '';
    if (fd !== String(SANDBOX_FILE_FD_BASE + paths.length) || !ETC_ALLOWLIST_PATHS.has(path)) {
      throw new TypeError(`not a sandbox file input: --file ${String(fd)} ${path}`);
    }
    paths.push(path);
  }
  return paths;
}

/** Directories (or /usr-merge symlinks) the namespace sandbox shows read-only from the host. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/**
 * Files from /etc a program commonly needs (loader, TLS roots, name resolution, users, time zone,
 * locale). /etc is not bound whole: it holds /etc/shadow, SSH host keys and other secrets.
 */
export const ETC_ALLOWLIST = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'pki',
  'crypto-policies',
  'resolv.conf',
  'hosts',
  'host.conf',
  'gai.conf',
  'nsswitch.conf',
  'passwd',
  'group',
  'localtime',
  'timezone',
  'os-release',
  'debian_version',
  'mime.types',
  'protocols',
  'services',
  'locale.alias',
  'locale.conf',
  'magic',
  'magic.mime',
  'inputrc',
  'terminfo',
  'fonts',
  'python3',
  'python3.11',
  'python3.12',
] as const;

const ETC_ALLOWLIST_PATHS: ReadonlySet<string> = new Set(ETC_ALLOWLIST.map((name) => `/etc/${name}`));

/** Private-key folders inside allowlisted /etc folders, hidden under an empty tmpfs. */
const ETC_MASKED = ['/etc/ssl/private', '/etc/pki/tls/private'] as const;

/**
 * What the sandbox's direct listeners need of the user namespace that owns its network namespace:
 * binding a port below 1024 (443 for a bare allowed name) takes CAP_NET_BIND_SERVICE there, and a
 * host that is not root can add an address literal to it only by entering that user namespace.
 * bubblewrap's --disable-userns moves the command into a nested user namespace, where neither
 * works, so such a sandbox goes without it: nested user namespaces stay refused by the seccomp
 * filter (unshare, setns, clone with CLONE_NEWUSER, clone3).
 */
function outerUsernsNeeds(network: EgressNetworkPlan | undefined): { readonly bindsLowPorts: boolean; readonly keepsOuterUserns: boolean } {
  const bindsLowPorts = (network?.listeners ?? []).some((listener) => listener.destination.port < 1024);
  const addsAsNonRoot = (network?.addedAddresses.length ?? 0) > 0 && process.getuid?.() !== 0;
  return { bindsLowPorts, keepsOuterUserns: bindsLowPorts || addsAsNonRoot };
}

function namespaceFlags(features: ReturnType<typeof detectSandboxFeatures>, unshareCgroup: boolean, needs: ReturnType<typeof outerUsernsNeeds>): string[] {
  const flags: string[] = [];
  if (features.userNamespace) {
    // Root in a user namespace has no capability on the host; no nested namespaces to attack the kernel with.
    flags.push('--unshare-user');
    if (features.disableUserns && !needs.keepsOuterUserns) flags.push('--disable-userns');
  }
  if (process.getuid?.() === 0) flags.push('--cap-drop', 'ALL');
  // The one capability the bridge needs, in the sandbox's own network namespace: binding nothing of the host's.
  if (needs.bindsLowPorts) flags.push('--cap-add', 'CAP_NET_BIND_SERVICE');
  flags.push('--unshare-ipc', '--unshare-uts', ...(unshareCgroup ? ['--unshare-cgroup-try'] : []), '--hostname', SANDBOX_HOSTNAME);
  // Always a network namespace of its own: only loopback, and with networkAllow the egress bridge.
  flags.push('--unshare-net');
  return flags;
}

// Read from the host's /usr and /etc once per host: a dozen lstat calls at every sandbox start otherwise.
function systemMounts(facts: SandboxFacts, canCopy: boolean): readonly string[] {
  return facts.remember(`system-mounts\0${String(canCopy)}`, () => Object.freeze(computeSystemMounts(canCopy)));
}

function computeSystemMounts(canCopy: boolean): string[] {
  const argv: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    const kind = entryKind(dir);
    if (kind === 'symlink') argv.push('--symlink', readlinkSync(dir), dir);
    else if (kind === 'dir') argv.push('--ro-bind', dir, dir);
  }
  // A small regular file (or a symlink to one, as a bind would show it) is copied into the
  // sandbox's root, whose final remount makes it read-only: a bind mount costs bubblewrap a
  // mount, a remount and a read of the whole mount table, each file (a quarter of a
  // namespaced sandbox's CPU for the twenty-odd files here). Its content is read when the
  // sandbox starts, from the same path a bind would have shown; folders are still bound.
  let copied = 0;
  for (const name of ETC_ALLOWLIST) {
    const path = `/etc/${name}`;
    if (entryKind(path) === undefined) continue;
    const mode = canCopy ? copyableFileMode(path) : undefined;
    if (mode === undefined) argv.push('--ro-bind-try', path, path);
    else argv.push('--perms', mode, '--file', String(SANDBOX_FILE_FD_BASE + copied++), path);
  }
  for (const path of ETC_MASKED) {
    if (entryKind(path) === 'dir') argv.push('--tmpfs', path);
  }
  return argv;
}

// The system directories the host has (and so the sandbox shows), looked up once per host.
function visibleSystemDirs(facts: SandboxFacts): readonly string[] {
  return facts.remember('system-dirs', () => Object.freeze(SYSTEM_DIRS.filter((dir) => entryKind(dir) !== undefined)));
}

// The command's install prefix, the manifest folder, the roots and cwd (a host directory, unless undefined: made inside), at their host paths.
function pathMounts(facts: SandboxFacts, spec: RunSpec, cwd: string | undefined, searchPath: string): string[] {
  const binds: SandboxBinds = new Map();
  const manifestDir = realpathSync(spec.manifestDir);
  for (const root of spec.roots) binds.set(root.path, root.access === 'read_write' ? 'rw' : 'ro');
  // The tool's own code is never writable, even inside a read-write root.
  binds.set(manifestDir, 'ro');
  for (const path of spec.readOnlyPaths ?? []) if (!binds.has(path)) binds.set(path, 'ro');
  const covered = (path: string) => [...binds.keys()].some((dir) => isPathInside(path, dir));
  if (cwd !== undefined && !covered(cwd)) binds.set(cwd, 'rw');
  const guards = guardHostFiles(spec, binds);

  const visible = [...visibleSystemDirs(facts), ...binds.keys()];
  const program = spec.command?.[0] ?? '';
  // A relative command path names a file in a cwd made inside, which the host cannot look into: nothing to mount for it.
  const isRelativePath = program.includes('/') && !isAbsolute(program);
  const command =
    cwd === undefined && isRelativePath
      ? { readOnlyBinds: [], symlinks: [] }
      : resolveCommandMounts(facts, isRelativePath && cwd !== undefined ? resolve(cwd, program) : program, searchPath, cwd ?? '/', visible, manifestDir);
  const argv: string[] = [];
  for (const dir of command.readOnlyBinds) argv.push('--ro-bind', dir, dir);
  for (const link of command.symlinks) argv.push('--symlink', link.target, link.path);
  // Shallow first, so a deeper bind (a read-only manifest folder inside a read-write root) wins.
  const ordered = [...binds.entries()].sort(([a], [b]) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  for (const [path, access] of ordered) argv.push(access === 'rw' ? '--bind' : '--ro-bind', path, path);
  argv.push(...guards);
  // A root declared at / or /etc would show the secrets the allowlist leaves out: mask them again.
  for (const secret of SECRET_PATHS) {
    if (!ordered.some(([path]) => isPathInside(secret, path))) continue;
    const kind = entryKind(secret);
    if (kind === 'dir') argv.push('--tmpfs', secret);
    else if (kind === 'file') argv.push('--ro-bind', '/dev/null', secret);
  }
  return argv;
}

/** Never visible in the namespace sandbox, even inside a declared root. */
const SECRET_PATHS = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/ssh', '/etc/ssl/private', '/etc/sudoers', '/etc/sudoers.d'] as const;

function sandboxEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (name === '' || name.includes('=') || name.includes('\0') || value.includes('\0')) {
      throw new TypeError(`invalid environment entry for the sandbox: ${JSON.stringify(name)}`);
    }
    out[name] = value;
  }
  out['PATH'] ??= SANDBOX_DEFAULT_PATH;
  return out;
}

/**
 * HOME for a namespaced process: the private /tmp, unless its env names one. Many programs
 * (npm servers through os.homedir(), Python's caches, git) read or write under HOME at start,
 * and without it they fall back to the user's entry in /etc/passwd, a home the sandbox hides.
 */
export const SANDBOX_HOME = '/tmp';

function homeEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return env['HOME'] === undefined ? { HOME: SANDBOX_HOME } : {};
}

// Resolved once per host: /bin/sh does not move under a running host, and this ran at every sandbox start.
function shellPath(facts: SandboxFacts): string {
  return facts.remember('shell', () => realpathSync('/bin/sh'));
}

// The octal mode of a regular file the host can read and that is small enough to copy; else undefined.
function copyableFileMode(path: string): string | undefined {
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > ETC_COPY_MAX_BYTES) return undefined;
    accessSync(path, constants.R_OK);
    return (stat.mode & 0o7777).toString(8).padStart(4, '0');
  } catch {
    return undefined;
  }
}

function entryKind(path: string): 'dir' | 'symlink' | 'file' | undefined {
  try {
    const stat = lstatSync(path);
    return stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

function unavailable(what: string, fix: string): HostError {
  return new HostError('sandbox_unavailable', 'The OS sandbox for process tools is not available on this host.', { reason: `${what}: ${fix}` });
}
