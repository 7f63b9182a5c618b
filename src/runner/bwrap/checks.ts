// The facts `toolhost doctor` reports about the OS sandbox: each check says what
// works, what does not, and what to do about it. Every check really runs the
// thing (bubblewrap, prlimit, python3 inside the namespace sandbox).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryHoldOf, probeCgroups } from './sandbox-cgroups.js';
import { runToCompletion } from '../process/spawn.js';
import { buildSandboxArgv } from './argv.js';
import { findBwrap, findExecutable, findPrlimit } from './binaries.js';
import { detectSandboxFeatures, explainNamespaceFailure } from './features.js';
import { INSTALL_BUBBLEWRAP, probeSandbox, readBwrapVersion } from './probe.js';
import { tryNamespaces } from './bwrap-run.js';
import { REFUSED_SYSCALLS_X86_64, seccompProgram } from './seccomp.js';
import { SANDBOX_PROXY_PORT, SANDBOX_PROXY_URL } from './egress-bridge.js';
import { openEgressGrant, type EgressGrant } from './egress-grant.js';
import { createSilentLogger } from '../../log.js';
import { ProcessServices } from '../process-services.js';
import { doctorRunSpec } from '../doctor-spec.js';

type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of the doctor's report; `facts` are stable, machine-readable values. */
export interface DoctorCheck {
  readonly name: string;
  readonly status: CheckStatus;
  /** One sentence: what works, or what does not, why, and what to do. */
  readonly detail: string;
  readonly facts: Readonly<Record<string, string | number | boolean | null>>;
}

interface SandboxCheckOptions {
  readonly bwrapPath?: string;
}

/**
 * Every OS-sandbox check, in report order. The doctor belongs to no host: its
 * sandboxes go through services of its own (spawner, groups, cgroups, facts
 * learned afresh), closed when the checks are done.
 */
export async function runSandboxChecks(options: SandboxCheckOptions = {}): Promise<DoctorCheck[]> {
  const services = new ProcessServices();
  try {
    return await runChecks(services, options.bwrapPath);
  } finally {
    await services.close();
  }
}

async function runChecks(services: ProcessServices, bwrapPath: string | undefined): Promise<DoctorCheck[]> {
  const bwrap = findBwrap(services.facts, bwrapPath);
  const checks: DoctorCheck[] = [await checkBubblewrap(services, bwrapPath)];
  checks.push(bwrap === undefined ? skipped('user-namespace', NO_BWRAP) : checkUserNamespace(services, bwrap));
  checks.push(bwrap === undefined ? skipped('network-namespace', NO_BWRAP) : await checkNetworkNamespace(bwrap));
  checks.push(await checkPrlimit(services));
  checks.push(checkPidsLimit(services, bwrap));
  const python = await checkPython();
  checks.push(python);
  if (bwrap === undefined) checks.push(skipped('memory-limit', NO_BWRAP));
  else if (python.status !== 'ok') checks.push(skipped('memory-limit', 'python3 is missing'));
  else checks.push(await checkMemoryLimit(services, bwrapPath));
  if (bwrap === undefined) checks.push(skipped('namespace-sandbox', NO_BWRAP));
  else if (python.status !== 'ok') checks.push(skipped('namespace-sandbox', 'python3 is missing'));
  else checks.push(await checkNamespaceSandbox(services, bwrapPath));
  checks.push(bwrap === undefined ? skipped('seccomp', NO_BWRAP) : await checkSeccomp(services, bwrapPath));
  if (bwrap === undefined) checks.push(skipped('egress-bridge', NO_BWRAP));
  else if (python.status !== 'ok') checks.push(skipped('egress-bridge', 'python3 is missing'));
  else checks.push(await checkEgressBridge(services, bwrapPath));
  return checks;
}

// End to end, and reaching nothing: a namespaced python3 asks the proxy, through the bridge,
// for a tunnel its grant does not allow, and must get the proxy's own refusal back.
async function checkEgressBridge(services: ProcessServices, bwrapPath: string | undefined): Promise<DoctorCheck> {
  const socat = findExecutable('socat') ?? null;
  if (socat === null) {
    return {
      name: 'egress-bridge',
      status: 'fail',
      detail: 'namespaced tools with network.allow cannot run without socat (the egress bridge): apt-get install socat',
      facts: { socat, works: false },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-doctor-'));
  let grant: EgressGrant | undefined;
  try {
    grant = await openEgressGrant({ allow: ['127.0.0.1:1'], readOnly: true, logger: createSilentLogger() });
    const ask = `import socket; s = socket.create_connection(("127.0.0.1", ${SANDBOX_PROXY_PORT}), timeout=5); s.sendall(b"CONNECT 127.0.0.1:2 HTTP/1.1\\r\\n\\r\\n"); print(s.recv(64).split()[1].decode())`;
    const spec = doctorRunSpec({
      mode: 'process',
      manifestDir: dir,
      command: ['python3', '-c', ask],
      memoryMb: 512,
      env: { PATH: process.env['PATH'] ?? '' },
      roots: [{ path: dir, access: 'read' }],
      networkAllow: ['127.0.0.1:1'],
    });
    const argv = buildSandboxArgv(spec, { services, cwd: dir, timeoutMs: 10_000, egress: grant, ...(bwrapPath === undefined ? {} : { bwrapPath }) });
    const out = await runToCompletion([...argv, ...(spec.command ?? [])], spec.env, dir, '', 15_000, services);
    const refused = grant.counts().refused;
    if (out.stdout.trim() === '403' && refused === 1) {
      return {
        name: 'egress-bridge',
        status: 'ok',
        detail: `${socat} bridges the sandbox's ${SANDBOX_PROXY_URL} to the host's egress proxy, which admits only allowed hosts`,
        facts: { socat, works: true },
      };
    }
    return {
      name: 'egress-bridge',
      status: 'fail',
      detail: `the egress bridge does not work inside the namespace sandbox: ${out.stderr.slice(0, 300) || out.stdout.slice(0, 300) || 'no output'}`,
      facts: { socat, works: false },
    };
  } catch (error) {
    return {
      name: 'egress-bridge',
      status: 'fail',
      detail: `the egress proxy cannot start: ${error instanceof Error ? error.message : String(error)}`,
      facts: { socat, works: false },
    };
  } finally {
    await grant?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// In force, not only built: a namespaced sh reads its own Seccomp line (2 = filter mode).
async function checkSeccomp(services: ProcessServices, bwrapPath: string | undefined): Promise<DoctorCheck> {
  const program = seccompProgram(services.facts);
  if (!program.ok) return { name: 'seccomp', status: 'fail', detail: program.reason, facts: { inForce: false, instructions: null } };
  // The calls answered EPERM by name (clone and socket are refused only with some arguments, clone3 with ENOSYS).
  const refused = Object.keys(REFUSED_SYSCALLS_X86_64);
  const facts = { instructions: program.instructions, architecture: 'x86_64', refusedSyscalls: refused.length + 2, refusedNames: refused.join(',') };
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-doctor-'));
  try {
    const spec = doctorRunSpec({
      mode: 'process',
      manifestDir: dir,
      command: ['/bin/sh', '-c', 'grep "^Seccomp" /proc/self/status'],
      memoryMb: 512,
    });
    const argv = buildSandboxArgv(spec, { services, cwd: dir, timeoutMs: 10_000, ...(bwrapPath === undefined ? {} : { bwrapPath }) });
    const out = await runToCompletion([...argv, ...(spec.command ?? [])], spec.env, dir, '', 15_000, services);
    if (/^Seccomp:\s*2$/m.test(out.stdout)) {
      return {
        name: 'seccomp',
        status: 'ok',
        detail: `a ${program.instructions}-instruction filter is in force in every namespaced process: ${refused.join(', ')}, clone with namespace flags and sockets other than AF_UNIX, AF_INET, AF_INET6 and netlink's NETLINK_ROUTE answer EPERM (clone3 ENOSYS)`,
        facts: { inForce: true, ...facts },
      };
    }
    return {
      name: 'seccomp',
      status: 'fail',
      detail: `the seccomp filter is not in force in the namespace sandbox (namespaced tools fail with sandbox_unavailable): ${out.stderr.slice(0, 300) || out.stdout.slice(0, 300) || 'no output'}`,
      facts: { inForce: false, ...facts },
    };
  } catch (error) {
    return {
      name: 'seccomp',
      status: 'fail',
      detail: `the seccomp filter cannot be installed: ${error instanceof Error ? error.message : String(error)}`,
      facts: { inForce: false, ...facts },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function checkBubblewrap(services: ProcessServices, bwrapPath: string | undefined): Promise<DoctorCheck> {
  const path = findBwrap(services.facts, bwrapPath) ?? null;
  const version = path === null ? undefined : await readBwrapVersion(path);
  const probe = await probeSandbox(services.facts, bwrapPath === undefined ? {} : { bwrapPath });
  const facts = { path, version: version ?? null, namespacesUsable: probe.ok };
  if (probe.ok) return { name: 'bubblewrap', status: 'ok', detail: `${path ?? 'bwrap'} ${probe.version}: pid, ipc, uts, net and mount namespaces can be created`, facts };
  return { name: 'bubblewrap', status: 'fail', detail: `process tools cannot run: ${probe.reason}`, facts };
}

function checkUserNamespace(services: ProcessServices, bwrap: string): DoctorCheck {
  const features = detectSandboxFeatures(services.facts, bwrap);
  const facts = { usable: features.userNamespace, disableNested: features.disableUserns };
  if (features.userNamespace) {
    const nested = features.disableUserns ? 'nested user namespaces are blocked (--disable-userns)' : 'bubblewrap < 0.8 cannot block nested user namespaces';
    return { name: 'user-namespace', status: features.disableUserns ? 'ok' : 'warn', detail: `root in the sandbox has no capability on the host; ${nested}`, facts };
  }
  const asRoot = process.getuid?.() === 0;
  return {
    name: 'user-namespace',
    // Root can build the other namespaces without one; anyone else cannot use bubblewrap at all.
    status: asRoot ? 'warn' : 'fail',
    detail: `${features.userNamespaceProblem ?? 'user namespaces are unavailable'}${asRoot ? '; as root the sandbox still runs, with capabilities dropped' : ''}`,
    facts,
  };
}

async function checkNetworkNamespace(bwrap: string): Promise<DoctorCheck> {
  const result = await tryNamespaces(bwrap, ['--unshare-net', '--die-with-parent']);
  if (result.ok)
    return {
      name: 'network-namespace',
      status: 'ok',
      detail: 'every namespaced process gets a network namespace of its own (no network, or only the egress proxy)',
      facts: { usable: true },
    };
  return { name: 'network-namespace', status: 'fail', detail: explainNamespaceFailure(result.stderr), facts: { usable: false } };
}

async function checkPrlimit(services: ProcessServices): Promise<DoctorCheck> {
  const path = findPrlimit(services.facts) ?? null;
  if (path === null) {
    return { name: 'prlimit', status: 'fail', detail: 'no resource limits without prlimit: install util-linux (apt-get install util-linux)', facts: { path, version: null } };
  }
  const out = await run(path, ['--version']);
  const version = /(\d+\.\d+(?:\.\d+)?)/.exec(out.stdout)?.[1] ?? null;
  return {
    name: 'prlimit',
    status: 'ok',
    detail: `${path}: CPU seconds, file size and open files are limited (address space too where no memory cgroup holds the sandbox)`,
    facts: { path, version },
  };
}

function checkPidsLimit(services: ProcessServices, bwrap: string | undefined): DoctorCheck {
  const cgroup = probeCgroups(services.facts).pids;
  if (cgroup.ok) {
    return {
      name: 'pids-limit',
      status: 'ok',
      detail: `each sandbox gets its own pids cgroup under ${cgroup.baseDir} (pids.max)`,
      facts: { mechanism: 'cgroup', cgroupVersion: cgroup.version, baseDir: cgroup.baseDir },
    };
  }
  const asRoot = process.getuid?.() === 0;
  const userns = bwrap !== undefined && detectSandboxFeatures(services.facts, bwrap).userNamespace;
  if (!asRoot && userns) {
    return {
      name: 'pids-limit',
      status: 'warn',
      detail: `namespace sandboxes count processes with RLIMIT_NPROC in their user namespace; isolation none has no process limit (${cgroup.reason})`,
      facts: { mechanism: 'rlimit', cgroupVersion: null, baseDir: null },
    };
  }
  return {
    name: 'pids-limit',
    status: 'warn',
    detail: `no process-count limit: ${asRoot ? 'the kernel does not apply RLIMIT_NPROC to root, and ' : ''}${cgroup.reason}`,
    facts: { mechanism: 'none', cgroupVersion: null, baseDir: null },
  };
}

async function checkPython(): Promise<DoctorCheck> {
  const path = findExecutable('python3') ?? null;
  if (path === null) return { name: 'python3', status: 'fail', detail: 'the bundled Python tool needs python3 on PATH: apt-get install python3', facts: { path, version: null } };
  const out = await run(path, ['--version']);
  const version = /(\d+\.\d+\.\d+)/.exec(`${out.stdout}${out.stderr}`)?.[1] ?? null;
  if (version === null) return { name: 'python3', status: 'fail', detail: `${path} --version failed: ${out.stderr.slice(0, 200)}`, facts: { path, version } };
  return { name: 'python3', status: 'ok', detail: `${path} (Python ${version})`, facts: { path, version } };
}

// End to end: python3 through the real argv of an isolation: namespace tool.
async function checkNamespaceSandbox(services: ProcessServices, bwrapPath: string | undefined): Promise<DoctorCheck> {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-doctor-'));
  try {
    const spec = doctorRunSpec({
      mode: 'process',
      manifestDir: dir,
      command: ['python3', '-c', 'print(6 * 7)'],
      memoryMb: 512,
      env: { PATH: process.env['PATH'] ?? '' },
      roots: [{ path: dir, access: 'read' }],
    });
    const argv = buildSandboxArgv(spec, { services, cwd: dir, timeoutMs: 10_000, ...(bwrapPath === undefined ? {} : { bwrapPath }) });
    // Through the spawner and the start gate, exactly as a call would run.
    const out = await runToCompletion([...argv, ...(spec.command ?? [])], spec.env, dir, '', 15_000, services);
    if (out.stdout.trim() === '42')
      return { name: 'namespace-sandbox', status: 'ok', detail: 'python3 runs inside the namespace sandbox, with its install prefix read-only', facts: { works: true } };
    return {
      name: 'namespace-sandbox',
      status: 'fail',
      detail: `python3 does not run inside the namespace sandbox: ${out.stderr.slice(0, 300) || 'no output'}`,
      facts: { works: false },
    };
  } catch (error) {
    return {
      name: 'namespace-sandbox',
      status: 'fail',
      detail: `the namespace sandbox cannot be built: ${error instanceof Error ? error.message : String(error)}`,
      facts: { works: false },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const NO_BWRAP = `bubblewrap is missing (${INSTALL_BUBBLEWRAP})`;

function skipped(name: string, why: string): DoctorCheck {
  return { name, status: 'fail', detail: `not checked: ${why}`, facts: {} };
}

function run(file: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, [...args], { timeout: 15_000, encoding: 'utf8', maxBuffer: 256 * 1024 }, (_error, stdout, stderr) => resolve({ stdout, stderr }));
  });
}

// End to end: a namespaced python3 that touches twice its memoryMb must be killed by the kernel,
// counted as an OOM kill in its own cgroup. Without a memory controller the address-space cap
// (RLIMIT_AS) is the fallback, and the check says why.
async function checkMemoryLimit(services: ProcessServices, bwrapPath: string | undefined): Promise<DoctorCheck> {
  const support = probeCgroups(services.facts);
  const hold = memoryHoldOf(support);
  // Swap is held with the memory only where the kernel accounts it (v1 memsw, v2 memory.swap.max).
  const swapLimited = support.memory.ok ? existsSync(join(support.memory.baseDir, support.memory.version === 2 ? 'memory.swap.max' : 'memory.memsw.limit_in_bytes')) : null;
  const facts = { mechanism: hold.heldBy, cgroupVersion: hold.cgroupVersion, reason: hold.reason, swapLimited };
  if (hold.heldBy === 'address_space') {
    return {
      name: 'memory-limit',
      status: 'warn',
      detail: `no memory controller can be used (${hold.reason ?? 'unknown'}): memoryMb is an address-space cap (RLIMIT_AS) per process, which runtimes that reserve more than they use (Node's WebAssembly, JITs, browsers) may not start under`,
      facts,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-doctor-'));
  try {
    const spec = doctorRunSpec({
      mode: 'process',
      manifestDir: dir,
      command: ['python3', '-c', 'b = bytearray(64 * 1024 * 1024); print(len(b))'],
      memoryMb: 32,
      env: { PATH: process.env['PATH'] ?? '' },
      roots: [{ path: dir, access: 'read' }],
    });
    const cgroup = await services.cgroups.createAsync({ processes: 16, memoryBytes: spec.memoryMb * 1024 * 1024 });
    const argv = buildSandboxArgv(spec, { services, cwd: dir, timeoutMs: 10_000, ...(cgroup === undefined ? {} : { cgroup }), ...(bwrapPath === undefined ? {} : { bwrapPath }) });
    const out = await runToCompletion([...argv, ...(spec.command ?? [])], spec.env, dir, '', 15_000, services);
    const kills = await services.cgroups.oomKills(cgroup);
    if (cgroup !== undefined) await services.cgroups.remove(cgroup);
    if (kills > 0 && out.stdout.trim() === '') {
      return {
        name: 'memory-limit',
        status: 'ok',
        detail: `each sandbox's memoryMb is held by a memory cgroup (v${String(hold.cgroupVersion)}, ${swapLimited === true ? 'swap included' : 'swap not accounted by this kernel'}): a namespaced process that used twice its limit was killed by the kernel`,
        facts,
      };
    }
    return {
      name: 'memory-limit',
      status: 'fail',
      detail: `a namespaced process went over its memory cgroup's limit without an OOM kill (${out.stdout.trim() || out.stderr.slice(0, 200) || 'no output'})`,
      facts,
    };
  } catch (error) {
    return { name: 'memory-limit', status: 'fail', detail: `the memory cgroup cannot be used: ${error instanceof Error ? error.message : String(error)}`, facts };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
