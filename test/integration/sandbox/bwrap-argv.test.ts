// The shape of the bubblewrap command line: which flags each isolation mode
// gets, what is bound where and with which access, and the limits the gate shell or prlimit applies.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { probeCgroups, SandboxCgroups } from '../../../src/runner/bwrap/sandbox-cgroups.js';
import { buildDashUlimitScript, computeSandboxLimits, CPU_MARGIN_SECONDS, DEFAULT_CPU_SECONDS, DEFAULT_PROCESSES } from '../../../src/runner/bwrap/rlimits.js';
import type { RunSpec } from '../../../src/runner/types.js';
import {
  buildSandboxArgv,
  ETC_ALLOWLIST,
  ETC_COPY_MAX_BYTES,
  SANDBOX_DEFAULT_PATH,
  SANDBOX_HOME,
  SANDBOX_FILE_FD_BASE,
  SANDBOX_SECCOMP_FD,
  sandboxFileInputs,
} from '../../../src/runner/bwrap/argv.js';
import { SANDBOX_EGRESS_DIR, SANDBOX_EGRESS_SOCKET } from '../../../src/runner/bwrap/egress-bridge.js';
import { planEgressNetwork } from '../../../src/runner/bwrap/egress-network.js';
import { runSpec } from '../../helpers/run-spec.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

const MANIFEST_DIR = realpathSync(fileURLToPath(new URL('../../fixtures/tools/sandbox/', import.meta.url)));
const READ_ROOT = realpathSync(fileURLToPath(new URL('../../fixtures/', import.meta.url)));
const WRITE_ROOT = realpathSync(fileURLToPath(new URL('../../unit/', import.meta.url)));

/** Debian's /bin/sh: the gate shell sets the limits itself (ulimit), without prlimit. */
const IS_DASH = basename(realpathSync('/bin/sh')) === 'dash';

// Every argv built here made a cgroup that no sandbox joins: closing the services removes them.

function spec(overrides: Partial<RunSpec> = {}): RunSpec {
  return runSpec({
    name: 'argv_test',
    mode: 'process',
    manifestDir: MANIFEST_DIR,
    command: ['/bin/sh', '-c', 'true'],
    stdout: 'text',
    isolation: 'namespace',
    env: { LANG: 'C.UTF-8' },
    roots: [
      { path: READ_ROOT, access: 'read' },
      { path: WRITE_ROOT, access: 'read_write' },
    ],
    floodCapBytes: 1024,
    ...overrides,
  });
}

/** The bwrap part (up to its `--`) and what runs after it. */
function split(argv: string[]): { bwrap: string[]; inner: string[] } {
  const end = argv.indexOf('--');
  return { bwrap: argv.slice(0, end), inner: argv.slice(end + 1) };
}

/** Every `flag a b` triple of the bwrap part, as "a b". */
function pairsOf(bwrap: string[], flag: string): string[] {
  return bwrap.flatMap((arg, index) => (arg === flag ? [`${bwrap[index + 1] ?? ''} ${bwrap[index + 2] ?? ''}`] : []));
}

describe('buildSandboxArgv', () => {
  it("starts with bubblewrap, then the limits (the gate shell's ulimit with dash, else prlimit), and ends with the start gate", () => {
    for (const isolation of ['none', 'namespace'] as const) {
      const argv = buildSandboxArgv(spec({ isolation }), { services, cwd: WRITE_ROOT });
      expect(argv[0]).toMatch(/(^|\/)bwrap$/);
      const prlimitAt = argv.findIndex((arg) => /(^|\/)prlimit$/.test(arg));
      // The gate is the last thing before the tool: a shell that reads one line, then execs "$@".
      const gateAt = argv.indexOf('-c');
      expect(gateAt).toBeGreaterThan(argv.indexOf('--'));
      expect(argv[gateAt + 1]).toMatch(/read -r start && exec "\$@"$/);
      expect(argv).toHaveLength(gateAt + 3);
      if (IS_DASH) {
        // The limits first, then the cgroup joins (memory, then pids: two v1 hierarchies here) and the gate:
        // all before any tool code. The memory cgroup holds memoryMb, so there is no address-space cap.
        expect(prlimitAt).toBe(-1);
        const joins =
          isolation === 'namespace'
            ? '/run/toolhost/cgroup.procs && echo 0 > /run/toolhost/cgroup-1.procs'
            : '/sys/fs/cgroup/memory/toolhost/\\S+/cgroup.procs && echo 0 > /sys/fs/cgroup/pids/toolhost/\\S+/cgroup.procs';
        expect(argv[gateAt + 1]).toMatch(new RegExp(`^ulimit -t \\d+ && .* && echo 0 > ${joins} && read -r start`));
        expect(argv[gateAt + 1]).not.toContain('ulimit -v');
      } else {
        expect(prlimitAt).toBeGreaterThan(argv.indexOf('--'));
        expect(gateAt).toBeGreaterThan(prlimitAt);
      }
    }
  });

  it('gives both modes a pid namespace, a new session, death with the parent, /proc, /dev and a clean env', () => {
    for (const isolation of ['none', 'namespace'] as const) {
      const { bwrap } = split(buildSandboxArgv(spec({ isolation }), { services, cwd: WRITE_ROOT }));
      for (const flag of ['--unshare-pid', '--die-with-parent', '--new-session', '--clearenv']) expect(bwrap).toContain(flag);
      expect(pairsOf(bwrap, '--proc')).toHaveLength(1);
      expect(bwrap[bwrap.indexOf('--proc') + 1]).toBe('/proc');
      expect(bwrap[bwrap.indexOf('--dev') + 1]).toBe('/dev');
      expect(bwrap[bwrap.indexOf('--chdir') + 1]).toBe(WRITE_ROOT);
    }
  });

  it('asks for the seccomp filter on fd 4 in namespace mode only', () => {
    expect(pairsOf(split(buildSandboxArgv(spec(), { services, cwd: WRITE_ROOT })).bwrap, '--seccomp')[0]?.split(' ')[0]).toBe(String(SANDBOX_SECCOMP_FD));
    expect(split(buildSandboxArgv(spec({ isolation: 'none' }), { services, cwd: WRITE_ROOT })).bwrap).not.toContain('--seccomp');
  });

  it('isolation none shares the host filesystem and network', () => {
    const { bwrap } = split(buildSandboxArgv(spec({ isolation: 'none' }), { services, cwd: WRITE_ROOT }));
    expect(pairsOf(bwrap, '--dev-bind')).toEqual(['/ /']);
    expect(bwrap).not.toContain('--unshare-net');
    expect(bwrap).not.toContain('--tmpfs');
  });

  it('isolation namespace unshares ipc, uts and net, drops capabilities and remounts / read-only', () => {
    const { bwrap } = split(buildSandboxArgv(spec(), { services, cwd: WRITE_ROOT }));
    for (const flag of ['--unshare-ipc', '--unshare-uts', '--unshare-net', '--unshare-cgroup-try', '--remount-ro']) expect(bwrap).toContain(flag);
    expect(pairsOf(bwrap, '--dev-bind')).toEqual([]);
    const remounted = bwrap.flatMap((arg, index) => (arg === '--remount-ro' ? [bwrap[index + 1]] : []));
    expect(remounted).toEqual(['/proc', '/']);
    if (process.getuid?.() === 0) expect(bwrap[bwrap.indexOf('--cap-drop') + 1]).toBe('ALL');
  });

  it('always gives namespace mode a network namespace; with networkAllow and a grant, only the bridge out (the proxy, and a listener per destination)', () => {
    const withoutGrant = buildSandboxArgv(spec({ networkAllow: ['api.github.com'] }), { services, cwd: WRITE_ROOT });
    expect(split(withoutGrant).bwrap).toContain('--unshare-net');
    expect(withoutGrant.join(' ')).not.toContain('socat');
    const dir = join(WRITE_ROOT, 'egress-test');
    const planned = planEgressNetwork(['api.github.com']);
    if (!planned.ok) throw new Error(planned.reason);
    const argv = buildSandboxArgv(spec({ networkAllow: ['api.github.com'] }), { services, cwd: WRITE_ROOT, egress: { dir, network: planned.plan } });
    const { bwrap, inner } = split(argv);
    expect(bwrap).toContain('--unshare-net');
    // The grant's folder read-only (its sockets still connect), and its /etc/hosts over the host's.
    expect(pairsOf(bwrap, '--ro-bind')).toEqual(expect.arrayContaining([`${dir} ${SANDBOX_EGRESS_DIR}`, `${dir}/hosts /etc/hosts`]));
    expect(SANDBOX_EGRESS_SOCKET).toBe(`${SANDBOX_EGRESS_DIR}/proxy.sock`);
    expect(inner[inner.indexOf('-c') + 1]).toContain('TCP4-LISTEN:443,bind=127.77.0.1,');
    // Port 443 is below 1024: the bridge may bind it in the sandbox's own network namespace, and nothing more;
    // the command stays in the user namespace that owns it (nested ones are refused by the seccomp filter).
    expect(bwrap.join(' ')).toContain('--cap-drop ALL --cap-add CAP_NET_BIND_SERVICE');
    expect(bwrap).not.toContain('--disable-userns');
    const highOnly = planEgressNetwork(['db.test:5432']);
    if (!highOnly.ok) throw new Error(highOnly.reason);
    const high = buildSandboxArgv(spec({ networkAllow: ['db.test:5432'] }), { services, cwd: WRITE_ROOT, egress: { dir, network: highOnly.plan } });
    expect(high).not.toContain('--cap-add');
    expect(high).toContain('--disable-userns');
    expect(pairsOf(bwrap, '--setenv')).toEqual(
      expect.arrayContaining(['HTTP_PROXY http://127.0.0.1:3128', 'https_proxy http://127.0.0.1:3128', 'ALL_PROXY http://127.0.0.1:3128']),
    );
    // The bridge starts before the gate reads its start line, so it listens before any tool code runs.
    const gate = inner[inner.indexOf('-c') + 1] ?? '';
    expect(gate.indexOf('socat')).toBeGreaterThan(-1);
    expect(gate.indexOf('socat')).toBeLessThan(gate.indexOf('read -r start'));
    // An empty allow list gets no bridge even with a grant.
    expect(buildSandboxArgv(spec(), { services, cwd: WRITE_ROOT, egress: { dir } }).join(' ')).not.toContain('socat');
  });

  it('binds roots with their access, the manifest folder read-only, and never /, /etc, /root or /home whole', () => {
    const { bwrap } = split(buildSandboxArgv(spec(), { services, cwd: WRITE_ROOT }));
    const readOnly = pairsOf(bwrap, '--ro-bind');
    const readWrite = pairsOf(bwrap, '--bind');
    expect(readOnly).toContain(`${READ_ROOT} ${READ_ROOT}`);
    expect(readOnly).toContain(`${MANIFEST_DIR} ${MANIFEST_DIR}`);
    expect(readWrite).toContain(`${WRITE_ROOT} ${WRITE_ROOT}`);
    // The manifest folder (inside the read root) is bound after it, so it stays read-only.
    expect(bwrap.lastIndexOf(MANIFEST_DIR)).toBeGreaterThan(bwrap.lastIndexOf(READ_ROOT));
    const bound = [...readOnly, ...readWrite, ...pairsOf(bwrap, '--ro-bind-try')].map((pair) => pair.split(' ')[0]);
    for (const path of ['/', '/etc', '/root', '/home', '/etc/shadow', '/etc/gshadow', '/var']) expect(bound).not.toContain(path);
    // /etc/passwd is there as a copy (see "the allowlisted /etc files"), its folders bound.
    expect(pairsOf(bwrap, '--file').map((pair) => pair.split(' ')[1])).toContain('/etc/passwd');
    if (existsSync('/etc/ssl')) expect(bound).toContain('/etc/ssl');
  });

  it("gives a private tmpfs /tmp, or the caller's private directory as /tmp", () => {
    const tmpfs = split(buildSandboxArgv(spec(), { services, cwd: WRITE_ROOT })).bwrap;
    const mounts = tmpfs.flatMap((arg, index) => (arg === '--tmpfs' ? [tmpfs[index + 1]] : []));
    expect(mounts).toEqual(expect.arrayContaining(['/tmp', '/dev/shm']));
    // Both are size-capped: tmpfs pages are host memory that RLIMIT_AS does not count.
    expect(tmpfs.filter((arg) => arg === '--size')).toHaveLength(2);
    const own = split(buildSandboxArgv(spec(), { services, cwd: WRITE_ROOT, privateTmp: READ_ROOT })).bwrap;
    expect(pairsOf(own, '--bind')).toContain(`${READ_ROOT} /tmp`);
  });

  it('makes a working directory asked for inside the private /tmp there, binding nothing of the host for it', () => {
    const cwd = '/tmp/toolhost-proc-0123456789ab';
    const { bwrap } = split(buildSandboxArgv(spec({ roots: [] }), { services, cwd, cwdInPrivateTmp: true }));
    // Made after the private /tmp is mounted, entered with --chdir; no bind mount names it.
    expect(bwrap.indexOf('--dir')).toBeGreaterThan(bwrap.lastIndexOf('/tmp', bwrap.indexOf('--dir')));
    expect(bwrap[bwrap.indexOf('--dir') + 1]).toBe(cwd);
    expect(bwrap[bwrap.indexOf('--chdir') + 1]).toBe(cwd);
    expect([...pairsOf(bwrap, '--bind'), ...pairsOf(bwrap, '--ro-bind')].filter((pair) => pair.includes('toolhost-proc-'))).toEqual([]);
    // Only a plain path below /tmp: never /tmp itself, a path elsewhere or one with `..`.
    for (const bad of ['/tmp', '/srv/work', '/tmp/../etc']) {
      expect(() => buildSandboxArgv(spec({ roots: [] }), { services, cwd: bad, cwdInPrivateTmp: true })).toThrow(TypeError);
    }
  });

  it('sets exactly spec.env, plus a fixed PATH and HOME (the private /tmp) when spec.env has none', () => {
    const { bwrap } = split(buildSandboxArgv(spec({ env: { LANG: 'C.UTF-8', TZ: 'UTC' } }), { services, cwd: WRITE_ROOT }));
    expect(pairsOf(bwrap, '--setenv')).toEqual(['LANG C.UTF-8', 'TZ UTC', `PATH ${SANDBOX_DEFAULT_PATH}`, `HOME ${SANDBOX_HOME}`]);
    const withPath = split(buildSandboxArgv(spec({ env: { PATH: '/usr/bin', HOME: '/work' } }), { services, cwd: WRITE_ROOT })).bwrap;
    expect(pairsOf(withPath, '--setenv')).toEqual(['PATH /usr/bin', 'HOME /work']);
    // isolation none sees the host's filesystem: no HOME is made up for it (its env is spec.env alone).
    const none = split(buildSandboxArgv(spec({ isolation: 'none', env: {} }), { services, cwd: WRITE_ROOT })).bwrap;
    expect(pairsOf(none, '--setenv')).toEqual([`PATH ${SANDBOX_DEFAULT_PATH}`]);
  });

  it('refuses an environment name bubblewrap would mangle', () => {
    expect(() => buildSandboxArgv(spec({ env: { 'A=B': 'x' } }), { services, cwd: WRITE_ROOT })).toThrow(TypeError);
  });

  it("applies address space (without a memory controller), CPU, file size and open-file limits (dash's ulimit units, else prlimit's bytes)", () => {
    // A host whose machine has no usable memory controller: RLIMIT_AS is the fallback.
    const noMemory = {
      facts: services.facts,
      cgroups: new SandboxCgroups(services.facts, undefined, { pids: probeCgroups(services.facts).pids, memory: { ok: false, reason: 'test' } }),
    };
    onTestFinished(() => noMemory.cgroups.close());
    const argv = buildSandboxArgv(spec({ memoryMb: 64 }), { services: noMemory, cwd: WRITE_ROOT, timeoutMs: 2500, limits: { fileSizeBytes: 4096, openFiles: 32 } });
    const cpu = 3 + CPU_MARGIN_SECONDS;
    if (IS_DASH) {
      expect(argv[argv.indexOf('-c') + 1]).toContain(`ulimit -v ${64 * 1024} && ulimit -t ${cpu + 1} && ulimit -S -t ${cpu} && ulimit -f 8 && ulimit -n 32 && `);
    } else {
      const prlimit = argv.slice(argv.findIndex((arg) => /(^|\/)prlimit$/.test(arg)));
      expect(prlimit.slice(1)).toEqual(expect.arrayContaining([`--as=${64 * 1024 * 1024}`, `--cpu=${cpu}:${cpu + 1}`, '--fsize=4096', '--nofile=32']));
    }
    // A file size that is no whole number of dash's 512-byte blocks is prlimit's to set, exactly.
    const odd = buildSandboxArgv(spec({ memoryMb: 64 }), { services: noMemory, cwd: WRITE_ROOT, timeoutMs: 2500, limits: { fileSizeBytes: 1000 } });
    expect(odd.slice(odd.findIndex((arg) => /(^|\/)prlimit$/.test(arg)) + 1)).toEqual(expect.arrayContaining([`--as=${64 * 1024 * 1024}`, '--fsize=1000']));
    expect(odd[odd.indexOf('-c') + 1]).not.toContain('ulimit');
    // A runtime's allowance (a server, an isolate process) sets the cap where it is the fallback.
    const allowance = buildSandboxArgv(spec({ memoryMb: 64 }), { services: noMemory, cwd: WRITE_ROOT, addressSpaceMb: 1600, limits: { fileSizeBytes: 1000 } });
    expect(allowance).toContain(`--as=${1600 * 1024 * 1024}`);
    // With the memory controller, neither has an address-space cap.
    const held = buildSandboxArgv(spec({ memoryMb: 64 }), { services, cwd: WRITE_ROOT, addressSpaceMb: 1600, limits: { fileSizeBytes: 1000 } });
    expect(held.some((arg) => arg.startsWith('--as=') || arg.includes('ulimit -v'))).toBe(false);
  });
});

describe('buildDashUlimitScript', () => {
  const limits = { addressSpaceBytes: 128 * 1024 * 1024, cpuSeconds: 7, fileSizeBytes: 1024 * 1024, openFiles: 64, processes: 20 };

  it("sets every limit prlimit would, in dash's units: KiB, seconds (the hard one a second above), 512-byte blocks", () => {
    expect(buildDashUlimitScript(limits, false)).toBe('ulimit -v 131072 && ulimit -t 8 && ulimit -S -t 7 && ulimit -f 2048 && ulimit -n 64');
    expect(buildDashUlimitScript(limits, true)).toBe('ulimit -v 131072 && ulimit -t 8 && ulimit -S -t 7 && ulimit -f 2048 && ulimit -n 64 && ulimit -p 20');
  });

  it('gives none for a limit that is no whole number of its units', () => {
    expect(buildDashUlimitScript({ ...limits, fileSizeBytes: 1000 }, false)).toBeUndefined();
    expect(buildDashUlimitScript({ ...limits, addressSpaceBytes: 1000 }, false)).toBeUndefined();
  });
});

describe('computeSandboxLimits', () => {
  it('rounds the timeout up to seconds and adds the margin; no timeout means the default budget', () => {
    expect(computeSandboxLimits({ memoryMb: 1 }, 1).cpuSeconds).toBe(1 + CPU_MARGIN_SECONDS);
    expect(computeSandboxLimits({ memoryMb: 1 }, 1000).cpuSeconds).toBe(1 + CPU_MARGIN_SECONDS);
    expect(computeSandboxLimits({ memoryMb: 1 }, 1001).cpuSeconds).toBe(2 + CPU_MARGIN_SECONDS);
    expect(computeSandboxLimits({ memoryMb: 1 }, undefined).cpuSeconds).toBe(DEFAULT_CPU_SECONDS);
    expect(computeSandboxLimits({ memoryMb: 1 }, undefined).processes).toBe(DEFAULT_PROCESSES);
  });

  it('refuses a non-positive memory limit', () => {
    expect(() => computeSandboxLimits({ memoryMb: 0 }, 1000)).toThrow(RangeError);
  });
});

describe("buildSandboxArgv: the command's interpreter", () => {
  let home: string;

  beforeAll(() => {
    // A fake version manager laid out like pyenv: shims/<tool> execs `<manager> exec <tool>`.
    home = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-argv-home-')));
    const manager = join(home, '.fakeenv');
    mkdirSync(join(manager, 'shims'), { recursive: true });
    mkdirSync(join(manager, 'libexec'));
    mkdirSync(join(manager, 'versions', '1.0', 'bin'), { recursive: true });
    mkdirSync(join(home, '.cargo', 'bin'), { recursive: true });
    writeExecutable(join(manager, 'versions', '1.0', 'bin', 'faketool'), '#!/bin/sh\necho real\n');
    writeExecutable(join(manager, 'libexec', 'fakeenv'), `#!/bin/sh\n[ "$1" = which ] && echo "${manager}/versions/1.0/bin/$2"\n`);
    writeExecutable(
      join(manager, 'shims', 'faketool'),
      `#!/usr/bin/env bash\nprogram="\${0##*/}"\nexport FAKEENV_ROOT="${manager}"\nexec "${manager}/libexec/fakeenv" exec "$program" "$@"\n`,
    );
    writeExecutable(join(home, '.cargo', 'bin', 'cargotool'), '#!/bin/sh\necho cargo\n');
  });

  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it("binds a version manager's real install read-only and turns the shim into a symlink to it", () => {
    const manager = join(home, '.fakeenv');
    const argv = buildSandboxArgv(spec({ command: ['faketool'], env: { PATH: `${manager}/shims:/usr/bin:/bin` } }), { services, cwd: WRITE_ROOT });
    const { bwrap } = split(argv);
    expect(pairsOf(bwrap, '--ro-bind')).toContain(`${manager}/versions/1.0 ${manager}/versions/1.0`);
    expect(pairsOf(bwrap, '--symlink')).toContain(`${manager}/versions/1.0/bin/faketool ${manager}/shims/faketool`);
    // Never the home or the manager's root: only the selected version.
    const bound = [...pairsOf(bwrap, '--ro-bind'), ...pairsOf(bwrap, '--bind')].map((pair) => pair.split(' ')[0]);
    expect(bound).not.toContain(home);
    expect(bound).not.toContain(manager);
  });

  it('binds only the binary when its prefix is a home folder that may hold credentials', () => {
    const tool = join(home, '.cargo', 'bin', 'cargotool');
    const { bwrap } = split(buildSandboxArgv(spec({ command: ['cargotool'], env: { PATH: `${home}/.cargo/bin:/usr/bin` } }), { services, cwd: WRITE_ROOT }));
    expect(pairsOf(bwrap, '--ro-bind')).toContain(`${tool} ${tool}`);
    const bound = pairsOf(bwrap, '--ro-bind').map((pair) => pair.split(' ')[0]);
    expect(bound).not.toContain(join(home, '.cargo'));
  });

  it('adds nothing for a command in the system directories', () => {
    const plain = split(buildSandboxArgv(spec({ command: ['sh'], env: { PATH: '/usr/bin:/bin' } }), { services, cwd: WRITE_ROOT })).bwrap;
    // Beside the merged-/usr links and /var/tmp (a link to the private /tmp in every sandbox).
    expect(pairsOf(plain, '--symlink').filter((pair) => !/^usr\//.test(pair) && pair !== '../tmp /var/tmp')).toEqual([]);
  });
});

describe("buildSandboxArgv: interpreter resolution is not the workspace's to choose", () => {
  let root: string;
  let manager: string;
  let workspace: string;
  let manifestDir: string;

  beforeAll(() => {
    // Like pyenv: `which` takes the version from the nearest .python-version up from its cwd, else 1.0.
    root = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-argv-pyenv-')));
    manager = join(root, '.verenv');
    for (const version of ['1.0', '2.0', '6.6']) {
      mkdirSync(join(manager, 'versions', version, 'bin'), { recursive: true });
      writeExecutable(join(manager, 'versions', version, 'bin', 'verpy'), '#!/bin/sh\n');
    }
    mkdirSync(join(manager, 'shims'));
    mkdirSync(join(manager, 'libexec'));
    writeExecutable(
      join(manager, 'libexec', 'verenv'),
      `#!/bin/sh\nd=$(pwd); v=1.0\nwhile :; do if [ -f "$d/.python-version" ]; then v=$(cat "$d/.python-version"); break; fi; [ "$d" = / ] && break; d=$(dirname "$d"); done\necho "${manager}/versions/$v/bin/$2"\n`,
    );
    writeExecutable(
      join(manager, 'shims', 'verpy'),
      `#!/usr/bin/env bash\nprogram="\${0##*/}"\nexport VERENV_ROOT="${manager}"\nexec "${manager}/libexec/verenv" exec "$program" "$@"\n`,
    );
    workspace = join(root, 'ws');
    manifestDir = join(workspace, 'manifests', 'tool');
    mkdirSync(manifestDir, { recursive: true });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const boundVersions = (cwd: string): string[] => {
    const argv = buildSandboxArgv(spec({ command: ['verpy'], manifestDir, env: { PATH: `${manager}/shims:/usr/bin:/bin` }, roots: [{ path: workspace, access: 'read_write' }] }), {
      services,
      cwd,
    });
    return pairsOf(split(argv).bwrap, '--ro-bind').flatMap((pair) => (pair.startsWith(`${manager}/versions/`) ? [pair.split(' ')[0]!.slice(manager.length + 10)] : []));
  };

  it('a .python-version a tool wrote into the workspace (its cwd, a parent of the manifest folder) changes nothing', () => {
    writeFileSync(join(workspace, '.python-version'), '6.6\n');
    const sub = join(workspace, 'sub');
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, '.python-version'), '6.6\n');
    expect(boundVersions(workspace)).toEqual(['1.0']);
    expect(boundVersions(sub)).toEqual(['1.0']);
  });

  it('a version file in the manifest folder (which tools cannot write) chooses the version', () => {
    writeFileSync(join(manifestDir, '.python-version'), '2.0\n');
    try {
      expect(boundVersions(join(workspace, 'sub'))).toEqual(['2.0']);
    } finally {
      rmSync(join(manifestDir, '.python-version'));
    }
  });
});

function writeExecutable(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

describe('buildSandboxArgv: the allowlisted /etc files', () => {
  const hostFiles = ETC_ALLOWLIST.map((name) => `/etc/${name}`).filter((path) => existsSync(path) && statSync(path).isFile() && statSync(path).size <= ETC_COPY_MAX_BYTES);

  it('copies the small regular ones (--file from descriptors in sequence, their mode) instead of a bind mount each', () => {
    const argv = buildSandboxArgv(spec(), { services, cwd: WRITE_ROOT });
    const { bwrap } = split(argv);
    expect(hostFiles).toContain('/etc/passwd');
    const copies = pairsOf(bwrap, '--file');
    expect(copies).toEqual(hostFiles.map((path, index) => `${SANDBOX_FILE_FD_BASE + index} ${path}`));
    for (const path of hostFiles) {
      expect(bwrap[bwrap.indexOf(path) - 3]).toBe((statSync(path).mode & 0o7777).toString(8).padStart(4, '0'));
      expect(pairsOf(bwrap, '--ro-bind-try')).not.toContain(`${path} ${path}`);
    }
    // Folders are still bound; the spawner opens exactly the copied files, in order.
    if (existsSync('/etc/ssl')) expect(pairsOf(bwrap, '--ro-bind-try')).toContain('/etc/ssl /etc/ssl');
    expect(sandboxFileInputs(argv)).toEqual(hostFiles);
    expect(sandboxFileInputs(buildSandboxArgv(spec({ isolation: 'none' }), { services, cwd: WRITE_ROOT }))).toEqual([]);
  });

  it('never opens a file off the allowlist or out of sequence for a sandbox', () => {
    const bwrap = '/usr/bin/bwrap';
    expect(() => sandboxFileInputs([bwrap, '--file', String(SANDBOX_FILE_FD_BASE), '/etc/shadow', '--', 'cat'])).toThrow(TypeError);
    expect(() => sandboxFileInputs([bwrap, '--file', String(SANDBOX_FILE_FD_BASE + 1), '/etc/passwd', '--', 'cat'])).toThrow(TypeError);
    // After `--` it is the tool's own argument, not bubblewrap's.
    expect(sandboxFileInputs([bwrap, '--', 'tool', '--file', '9', '/etc/shadow'])).toEqual([]);
  });
});

describe('buildSandboxArgv: secrets under a broad root', () => {
  it('masks /etc/shadow and SSH host keys even when a root covers /etc', () => {
    const { bwrap } = split(buildSandboxArgv(spec({ roots: [{ path: '/etc', access: 'read' }] }), { services, cwd: WRITE_ROOT }));
    expect(pairsOf(bwrap, '--ro-bind')).toContain('/dev/null /etc/shadow');
    const afterRoot = bwrap.slice(bwrap.lastIndexOf('/etc') - 1);
    expect(afterRoot.join(' ')).toContain('/dev/null /etc/shadow');
    if (existsSync('/etc/ssh')) expect(bwrap[bwrap.lastIndexOf('/etc/ssh') - 1]).toBe('--tmpfs');
  });
});
