// The seccomp filter in the real namespace sandbox: a Python probe makes raw
// system calls through ctypes with arguments that succeed (or fail otherwise
// than EPERM) on this host without the filter, and gets EPERM for each; the
// filter is in force in /proc/self/status; python3, node and sh still run.
import { describe, expect, it, afterEach } from 'vitest';
import { buildSandboxArgv } from '../../../src/runner/bwrap/argv.js';
import { probeSpec, runProbe, runSandboxed, waitForNoMarkedProcessesOrKill, type ProbeResult } from '../../helpers/sandbox-run.js';
import { newMarker } from '../../helpers/proc-scan.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

const AF_NETLINK = 16;
const AF_PACKET = 17;
const SOCK_RAW = 3;
const NETLINK_AUDIT = 9;

// nr and arguments per refused call; the comment says what the host answers without the filter.
const REFUSED: Array<[string, number, Array<number | string>]> = [
  ['keyctl', 250, [0, -2, 1]], // KEYCTL_GET_KEYRING_ID, process keyring, create: a key id
  ['add_key', 248, ['user', 'toolhost', 'data', 4, -2]], // a key id
  ['ptrace', 101, [0, 0, 0, 0]], // PTRACE_TRACEME: 0
  ['bpf', 321, [9999, 0, 0]], // an unknown command: EINVAL
  ['perf_event_open', 298, [0, 0, -1, -1, 0]], // no attr: EFAULT
  ['userfaultfd', 323, [0x7fffffff]], // bad flags: EINVAL
  ['unshare', 272, [0]], // unshare nothing: 0
  ['mount', 165, [1, 1, 1, 0, 0]], // bad pointers: EFAULT
  ['io_uring_setup', 425, [1, 0]], // no params: EFAULT (io_uring is enabled here: kernel.io_uring_disabled 0)
  ['io_uring_enter', 426, [-1, 0, 0, 0, 0, 0]], // no ring: EBADF
  ['io_uring_register', 427, [-1, 0, 0, 0]], // no ring: EBADF
];

describe('namespace sandbox: seccomp', () => {
  let marker = newMarker('sandbox');
  afterEach(async () => {
    expect(await waitForNoMarkedProcessesOrKill(marker)).toEqual([]);
    marker = newMarker('sandbox');
  });

  it('answers EPERM to every refused call, and to packet sockets and netlink other than NETLINK_ROUTE', async () => {
    const ops = [
      ...REFUSED.map(([, nr, args]) => ({ op: 'syscall', nr, args })),
      { op: 'socket', family: AF_NETLINK, type: SOCK_RAW, proto: NETLINK_AUDIT },
      { op: 'socket', family: AF_PACKET, type: SOCK_RAW },
      { op: 'socket', family: 1, type: 1 }, // AF_UNIX stream: allowed
      { op: 'socket', family: 2, type: 1 }, // AF_INET stream: allowed
      { op: 'syscall', nr: 39, args: [] }, // getpid: allowed
      { op: 'read', path: '/proc/self/status' },
    ];
    const spec = probeSpec(marker);
    const results = await runProbe(spec, { cwd: spec.manifestDir }, ops);
    const named = Object.fromEntries(REFUSED.map(([name], index) => [name, results[index]]));
    expect(named).toEqual(Object.fromEntries(REFUSED.map(([name]) => [name, { error: 'EPERM' }])));
    const rest = results.slice(REFUSED.length);
    expect(rest.slice(0, 5)).toEqual([{ error: 'EPERM' }, { error: 'EPERM' }, { ok: true }, { ok: true }, { ok: expect.any(Number) as number }]);
    const status = (rest[5] as { ok: string }).ok;
    expect(status).toMatch(/^Seccomp:\s*2$/m);
    expect(status).toMatch(/^NoNewPrivs:\s*1$/m);
  });

  it('still runs python3, node (threads, child processes) and sh', async () => {
    const cwd = probeSpec(marker).manifestDir;
    const python = await runProbe(probeSpec(marker), { cwd }, [{ op: 'env' }]);
    expect(python[0]).toMatchObject({ ok: expect.any(Object) as object });
    // Node 20 starts libuv and V8 threads (glibc tries clone3 first, falls back to clone).
    const nodeScript =
      'const { Worker } = require("worker_threads"); new Worker("1", { eval: true }).on("exit", () => console.log(require("child_process").execFileSync("/bin/sh", ["-c", "echo forked"]).toString().trim()))';
    const node = await runSandboxed(probeSpec(marker, { command: [process.execPath, '-e', nodeScript], memoryMb: 4096 }), { cwd });
    expect({ exit: node.exitCode, out: node.stdout.trim() }).toEqual({ exit: 0, out: 'forked' });
    const sh = await runSandboxed(probeSpec(marker, { command: ['/bin/sh', '-c', 'echo $((6 * 7)) | cat'] }), { cwd });
    expect({ exit: sh.exitCode, out: sh.stdout.trim() }).toEqual({ exit: 0, out: '42' });
  });

  it("lets a tool read its own network interfaces (Node's os.networkInterfaces) but not change them", async () => {
    const cwd = probeSpec(marker).manifestDir;
    const script = 'console.log(JSON.stringify(Object.keys(require("os").networkInterfaces())))';
    const node = await runSandboxed(probeSpec(marker, { command: [process.execPath, '-e', script], memoryMb: 4096 }), { cwd });
    expect({ exit: node.exitCode, out: node.stdout.trim() }).toEqual({ exit: 0, out: '["lo"]' });
    // The netlink socket opens; changing a link needs CAP_NET_ADMIN, which the sandbox has not.
    const ip = await runSandboxed(probeSpec(marker, { command: ['/bin/sh', '-c', 'ip link set lo down 2>&1; echo "exit $?"'] }), { cwd });
    expect(ip.stdout).toMatch(/Operation not permitted/);
    expect(ip.stdout.trim().split('\n').at(-1)).not.toBe('exit 0');
  });

  it('asks bubblewrap for the program on fd 4, which the tool never sees', async () => {
    const spec = probeSpec(marker);
    const argv = buildSandboxArgv(spec, { services, cwd: spec.manifestDir });
    expect(argv.slice(0, argv.indexOf('--')).join(' ')).toContain('--seccomp 4');
    const [fds] = (await runProbe(spec, { cwd: spec.manifestDir }, [{ op: 'list', path: '/proc/self/fd' }])) as ProbeResult[];
    // 0-2, and the descriptor listdir itself holds open.
    expect((fds as { ok: string[] }).ok.map(Number).filter((fd) => fd > 3)).toEqual([]);
  });
});
