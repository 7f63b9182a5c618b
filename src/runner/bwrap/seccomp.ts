// The seccomp filter every namespaced process runs under (SPEC section 3.3),
// given to bubblewrap with --seccomp FD. What a tool never needs and an
// attacker wants answers EPERM: kernel keyrings, ptrace and process_vm_*, bpf,
// perf_event_open, userfaultfd, io_uring, kernel modules and kexec, new namespaces
// (unshare, setns, clone with a CLONE_NEW* flag), mounts, and sockets of any
// family but AF_UNIX, AF_INET, AF_INET6 and netlink's NETLINK_ROUTE (getifaddrs:
// Node's os.networkInterfaces() throws without it, and many npm servers call it
// at start; the sandbox's own network namespace holds only its loopback, and with
// every capability dropped the socket can read it, not change it). clone3 answers ENOSYS: its flags
// sit in a struct in memory that seccomp cannot read, and glibc falls back to
// clone(), whose flags it can. Everything else is allowed.
//
// Why our own assembler and not libseccomp: the filter is under fifty
// instructions with one architecture, libseccomp would need a native binding
// or an exporter program built at install time, and the assembled program is
// unit-tested by interpreting it (test/unit/runner/bwrap/seccomp.test.ts) and
// proven in the sandbox by a probe (test/integration/sandbox/seccomp.test.ts).
import { arch } from 'node:os';
import { assembleBpf, encodeBpf, type BpfStep } from './seccomp-bpf.js';
import type { SandboxFacts } from './sandbox-facts.js';

/** AUDIT_ARCH_X86_64 (linux/audit.h): EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE. */
export const AUDIT_ARCH_X86_64 = 0xc000003e;
/** x32 system calls are the x86_64 numbers with this bit set: another table, refused whole. */
export const X32_SYSCALL_BIT = 0x40000000;

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const EPERM = 1;
export const ENOSYS = 38;

/** Offsets in struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64 each). */
const SECCOMP_DATA = { nr: 0, arch: 4, args0Low: 16, args2Low: 32 } as const;

/** x86_64 numbers (asm/unistd_64.h) of the calls refused outright with EPERM. */
export const REFUSED_SYSCALLS_X86_64: Readonly<Record<string, number>> = {
  // kernel keyrings
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  // another process's memory
  ptrace: 101,
  process_vm_readv: 310,
  process_vm_writev: 311,
  // kernel attack surface a tool never needs
  bpf: 321,
  perf_event_open: 298,
  userfaultfd: 323,
  // io_uring: its operations bypass this filter (an IORING_OP_SOCKET makes a socket of any family
  // without a socket() call), as Docker's and Chrome's profiles refuse it
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  // kernel modules, kexec
  init_module: 175,
  delete_module: 176,
  finit_module: 313,
  kexec_load: 246,
  kexec_file_load: 320,
  // new namespaces
  unshare: 272,
  setns: 308,
  // mounts, old and new API
  mount: 165,
  umount2: 166,
  pivot_root: 155,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  open_tree_attr: 467,
  // privileged calls that have no business in a sandbox (they need capabilities it lacks anyway)
  open_by_handle_at: 304,
  iopl: 172,
  ioperm: 173,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  acct: 163,
  quotactl: 179,
};

export const SYSCALL_CLONE = 56;
export const SYSCALL_CLONE3 = 435;
export const SYSCALL_SOCKET = 41;

/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
export const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

/** Socket families a tool may open: AF_UNIX, AF_INET, AF_INET6. */
const ALLOWED_SOCKET_FAMILIES = { AF_UNIX: 1, AF_INET: 2, AF_INET6: 10 } as const;
/** AF_NETLINK is allowed for one protocol only: NETLINK_ROUTE (linux/netlink.h), what getifaddrs(3) opens. */
export const AF_NETLINK = 16;
export const NETLINK_ROUTE = 0;

/** The filter as steps (readable, and what the unit test interprets). */
function seccompSteps(): BpfStep[] {
  const steps: BpfStep[] = [
    // A program for x86_64 numbers must never judge another table's: i386 (int 0x80) is killed.
    { op: 'load', offset: SECCOMP_DATA.arch },
    { op: 'jeq', k: AUDIT_ARCH_X86_64, then: 'native', else: 'kill' },
    { op: 'label', name: 'native' },
    { op: 'load', offset: SECCOMP_DATA.nr },
    { op: 'jge', k: X32_SYSCALL_BIT, then: 'eperm' },
  ];
  for (const nr of Object.values(REFUSED_SYSCALLS_X86_64)) steps.push({ op: 'jeq', k: nr, then: 'eperm' });
  steps.push(
    { op: 'jeq', k: SYSCALL_CLONE3, then: 'enosys' },
    { op: 'jeq', k: SYSCALL_CLONE, then: 'clone' },
    { op: 'jeq', k: SYSCALL_SOCKET, then: 'socket' },
    { op: 'ret', k: SECCOMP_RET_ALLOW },
    // clone(flags, …): the namespace flags all sit in the low word of args[0].
    { op: 'label', name: 'clone' },
    { op: 'load', offset: SECCOMP_DATA.args0Low },
    { op: 'jset', k: CLONE_NAMESPACE_FLAGS, then: 'eperm', else: 'allow' },
    // socket(family, …): family is an int, the low word of args[0].
    { op: 'label', name: 'socket' },
    { op: 'load', offset: SECCOMP_DATA.args0Low },
    { op: 'jeq', k: ALLOWED_SOCKET_FAMILIES.AF_UNIX, then: 'allow' },
    { op: 'jeq', k: ALLOWED_SOCKET_FAMILIES.AF_INET, then: 'allow' },
    { op: 'jeq', k: ALLOWED_SOCKET_FAMILIES.AF_INET6, then: 'allow' },
    { op: 'jeq', k: AF_NETLINK, then: 'netlink', else: 'eperm' },
    // socket(AF_NETLINK, type, protocol): protocol is an int, the low word of args[2].
    { op: 'label', name: 'netlink' },
    { op: 'load', offset: SECCOMP_DATA.args2Low },
    { op: 'jeq', k: NETLINK_ROUTE, then: 'allow', else: 'eperm' },
    { op: 'label', name: 'allow' },
    { op: 'ret', k: SECCOMP_RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'ret', k: SECCOMP_RET_ERRNO | EPERM },
    { op: 'label', name: 'enosys' },
    { op: 'ret', k: SECCOMP_RET_ERRNO | ENOSYS },
    { op: 'label', name: 'kill' },
    { op: 'ret', k: SECCOMP_RET_KILL_PROCESS },
  );
  return steps;
}

type SeccompProgram = { readonly ok: true; readonly bytes: Buffer; readonly instructions: number } | { readonly ok: false; readonly reason: string };

/** The encoded filter for this machine, or why there is none (then namespaced tools fail closed). */
export function seccompProgram(facts: SandboxFacts, machine: string = arch()): SeccompProgram {
  if (machine !== 'x64') {
    return { ok: false, reason: `no seccomp filter for the ${machine} architecture (only x86_64): namespaced tools cannot run here` };
  }
  // Assembling takes about 0.1 ms and every namespaced sandbox start asked twice (argv, fd 4).
  const bytes = facts.remember('seccomp-x64', () => encodeBpf(assembleBpf(seccompSteps())));
  return { ok: true, bytes, instructions: bytes.length / 8 };
}
