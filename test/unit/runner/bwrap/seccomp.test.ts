// The assembled seccomp program, run by a classic-BPF interpreter written
// here from linux/filter.h semantics: every refused call answers EPERM, clone3
// ENOSYS, clone only with namespace flags, socket only for other families (netlink for NETLINK_ROUTE alone),
// x32 numbers and foreign architectures never reach the allow path, and
// everything else is allowed. The real kernel's verdicts are in
// test/integration/sandbox/seccomp.test.ts.
import { describe, expect, it } from 'vitest';
import { assembleBpf, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_LD_W_ABS, BPF_RET_K, decodeBpf, encodeBpf, type BpfInstruction } from '../../../../src/runner/bwrap/seccomp-bpf.js';
import { SandboxFacts } from '../../../../src/runner/bwrap/sandbox-facts.js';
import {
  AF_NETLINK,
  AUDIT_ARCH_X86_64,
  CLONE_NAMESPACE_FLAGS,
  ENOSYS,
  EPERM,
  NETLINK_ROUTE,
  REFUSED_SYSCALLS_X86_64,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  seccompProgram,
  SYSCALL_CLONE,
  SYSCALL_CLONE3,
  SYSCALL_SOCKET,
  X32_SYSCALL_BIT,
} from '../../../../src/runner/bwrap/seccomp.js';

interface SeccompData {
  readonly nr: number;
  readonly arch?: number;
  readonly args?: readonly number[];
}

/** Runs a program over one seccomp_data, as the kernel would; throws on anything the kernel would reject. */
function interpret(program: readonly BpfInstruction[], data: SeccompData): number {
  const words = new Uint32Array(16);
  words[0] = data.nr >>> 0;
  words[1] = (data.arch ?? AUDIT_ARCH_X86_64) >>> 0;
  (data.args ?? []).forEach((arg, index) => {
    words[4 + index * 2] = arg >>> 0; // low word (little-endian u64)
    words[5 + index * 2] = Math.floor(arg / 2 ** 32) >>> 0;
  });
  let a = 0;
  for (let pc = 0, steps = 0; pc < program.length && steps < 10_000; steps++) {
    const ins = program[pc]!;
    switch (ins.code) {
      case BPF_LD_W_ABS:
        if (ins.k % 4 !== 0 || ins.k >= 64) throw new Error(`load outside seccomp_data: ${ins.k}`);
        a = words[ins.k / 4]!;
        pc++;
        break;
      case BPF_JEQ_K:
        pc += 1 + (a === ins.k ? ins.jt : ins.jf);
        break;
      case BPF_JGE_K:
        pc += 1 + (a >= ins.k ? ins.jt : ins.jf);
        break;
      case BPF_JSET_K:
        pc += 1 + ((a & ins.k) >>> 0 !== 0 ? ins.jt : ins.jf);
        break;
      case BPF_RET_K:
        return ins.k;
      default:
        throw new Error(`unexpected opcode ${ins.code}`);
    }
  }
  throw new Error('the program fell off its end');
}

const program = (() => {
  const built = seccompProgram(new SandboxFacts(), 'x64');
  if (!built.ok) throw new Error(built.reason);
  return decodeBpf(built.bytes);
})();
const verdict = (data: SeccompData): number => interpret(program, data);
const ERRNO_EPERM = SECCOMP_RET_ERRNO | EPERM;

describe('the seccomp program', () => {
  it('is small, encoded as 8-byte sock_filter entries, and round-trips', () => {
    const built = seccompProgram(new SandboxFacts(), 'x64');
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.bytes.length).toBe(built.instructions * 8);
    expect(built.instructions).toBeLessThan(80);
    expect(encodeBpf(decodeBpf(built.bytes))).toEqual(built.bytes);
  });

  it.each(Object.entries(REFUSED_SYSCALLS_X86_64))('refuses %s (nr %d) with EPERM', (_name, nr) => {
    expect(verdict({ nr })).toBe(ERRNO_EPERM);
  });

  it('answers clone3 with ENOSYS, so libc falls back to clone', () => {
    expect(verdict({ nr: SYSCALL_CLONE3 })).toBe(SECCOMP_RET_ERRNO | ENOSYS);
  });

  it('allows clone for threads and forks, refuses it with any namespace flag', () => {
    // glibc's pthread_create flags, and fork()'s SIGCHLD.
    const threadFlags = 0x3d0f00;
    expect(verdict({ nr: SYSCALL_CLONE, args: [threadFlags] })).toBe(SECCOMP_RET_ALLOW);
    expect(verdict({ nr: SYSCALL_CLONE, args: [17] })).toBe(SECCOMP_RET_ALLOW);
    for (const flag of [0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000]) {
      expect(CLONE_NAMESPACE_FLAGS & flag).toBe(flag);
      expect(verdict({ nr: SYSCALL_CLONE, args: [17 | flag] })).toBe(ERRNO_EPERM);
    }
  });

  it('allows sockets of AF_UNIX, AF_INET and AF_INET6, and netlink for NETLINK_ROUTE only', () => {
    for (const family of [1, 2, 10]) expect(verdict({ nr: SYSCALL_SOCKET, args: [family, 1, 0] })).toBe(SECCOMP_RET_ALLOW);
    // AF_PACKET, AF_KEY, AF_ALG, AF_VSOCK, AF_BLUETOOTH, AF_UNSPEC.
    for (const family of [17, 15, 38, 40, 31, 0]) expect(verdict({ nr: SYSCALL_SOCKET, args: [family, 3, 0] })).toBe(ERRNO_EPERM);
    // getifaddrs: socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE).
    expect(verdict({ nr: SYSCALL_SOCKET, args: [AF_NETLINK, 3 | 0x80000, NETLINK_ROUTE] })).toBe(SECCOMP_RET_ALLOW);
    // NETLINK_SOCK_DIAG, NETLINK_XFRM, NETLINK_AUDIT, NETLINK_NETFILTER, NETLINK_KOBJECT_UEVENT, NETLINK_GENERIC, and a high word that must not matter.
    for (const protocol of [4, 6, 9, 12, 15, 16, 2 ** 32 + 4]) expect(verdict({ nr: SYSCALL_SOCKET, args: [AF_NETLINK, 3, protocol] })).toBe(ERRNO_EPERM);
  });

  it('refuses every x32 number, even one whose low bits name an allowed call', () => {
    expect(verdict({ nr: X32_SYSCALL_BIT | 0 })).toBe(ERRNO_EPERM); // x32 read
    expect(verdict({ nr: X32_SYSCALL_BIT | SYSCALL_SOCKET, args: [1] })).toBe(ERRNO_EPERM);
    expect(verdict({ nr: 0xffffffff })).toBe(ERRNO_EPERM);
  });

  it('kills a call made through another architecture (i386 int 0x80)', () => {
    expect(verdict({ nr: 0, arch: 0x40000003 })).toBe(SECCOMP_RET_KILL_PROCESS);
    expect(verdict({ nr: 101, arch: 0x40000003 })).toBe(SECCOMP_RET_KILL_PROCESS);
  });

  it('allows everything else, among it what Node, Python and sh start with', () => {
    const refused = new Set([...Object.values(REFUSED_SYSCALLS_X86_64), SYSCALL_CLONE3]);
    for (let nr = 0; nr < 470; nr++) {
      if (refused.has(nr) || nr === SYSCALL_CLONE || nr === SYSCALL_SOCKET) continue;
      expect(verdict({ nr, args: [0x7fffffff, 0, 0] })).toBe(SECCOMP_RET_ALLOW);
    }
  });

  it('exists only for x86_64: elsewhere namespaced tools fail closed', () => {
    expect(seccompProgram(new SandboxFacts(), 'arm64')).toMatchObject({ ok: false });
  });
});

describe('assembleBpf', () => {
  it('resolves labels to forward offsets and refuses bad programs', () => {
    const ins = assembleBpf([
      { op: 'load', offset: 0 },
      { op: 'jeq', k: 1, then: 'yes', else: 'no' },
      { op: 'label', name: 'no' },
      { op: 'ret', k: 0 },
      { op: 'label', name: 'yes' },
      { op: 'ret', k: 1 },
    ]);
    expect(ins[1]).toEqual({ code: BPF_JEQ_K, jt: 1, jf: 0, k: 1 });
    expect(interpret(ins, { nr: 1 })).toBe(1);
    expect(interpret(ins, { nr: 2 })).toBe(0);
    expect(() =>
      assembleBpf([
        { op: 'label', name: 'back' },
        { op: 'jeq', k: 0, then: 'back' },
        { op: 'ret', k: 0 },
      ]),
    ).toThrow(/forward/);
    expect(() =>
      assembleBpf([
        { op: 'jeq', k: 0, then: 'nowhere' },
        { op: 'ret', k: 0 },
      ]),
    ).toThrow(/unknown/);
    expect(() => assembleBpf([{ op: 'load', offset: 0 }])).toThrow(/end with ret/);
  });
});
