// The address-space cap of an upstream server's process. `memoryMb` is the
// server's data; the runtime it is written in reserves virtual memory of its
// own before it runs a line (Node 20: code range, heap cage, thread stacks,
// about 1.1 GiB; measured: the reference filesystem server starts at RLIMIT_AS
// 1152 MiB, not at 1024). That reservation is the host's allowance, as for the
// isolate process (isolate-sandbox.ts), so a server declares what it uses and
// fits the built-in limits.maxMemoryMb.
import type { RunSpec } from '../types.js';

/** Address space the host adds to every server's memoryMb for its runtime, in MiB. */
export const UPSTREAM_RUNTIME_ALLOWANCE_MB = 1536;

/** The RLIMIT_AS of a server process whose manifest says `memoryMb`, in MiB. */
export function upstreamAddressSpaceMb(memoryMb: number): number {
  return UPSTREAM_RUNTIME_ALLOWANCE_MB + memoryMb;
}

/** The spec the server's sandbox is built from: its memoryMb plus the runtime's allowance. */
export function withRuntimeAllowance(spec: RunSpec): RunSpec {
  return { ...spec, memoryMb: upstreamAddressSpaceMb(spec.memoryMb) };
}
