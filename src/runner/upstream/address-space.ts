// The address-space cap of an upstream server's process, where no memory
// controller can hold it (RLIMIT_AS is then the fallback; with a memory
// cgroup the server is held to its memoryMb of memory actually used, and has
// no address-space cap). `memoryMb` is the server's data; the runtime it is
// written in reserves virtual memory of its own before it runs a line (Node
// 20: code range, heap cage, thread stacks, about 1.1 GiB; measured: the
// reference filesystem server starts at RLIMIT_AS 1152 MiB, not at 1024).
// Under the fallback that reservation is the host's allowance, so a server
// declares what it uses and fits the built-in limits.maxMemoryMb.

/** Address space the host adds to every server's memoryMb for its runtime under the RLIMIT_AS fallback, in MiB. */
export const UPSTREAM_RUNTIME_ALLOWANCE_MB = 1536;

/** The RLIMIT_AS of a server process whose manifest says `memoryMb`, where RLIMIT_AS is the fallback, in MiB. */
export function upstreamAddressSpaceMb(memoryMb: number): number {
  return UPSTREAM_RUNTIME_ALLOWANCE_MB + memoryMb;
}
