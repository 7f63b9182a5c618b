// How this machine holds a sandbox's memory, for `list` and `explain`: learned
// the way a host learns it (sandbox-cgroups.ts), and said in one phrase.
import { memoryHoldOf, probeCgroups, SandboxFacts, type MemoryHold } from '../runner/index.js';
import type { ToolMemory } from './tool-summary.js';

/** The memory hold every sandbox of a host on this machine gets. */
export function machineMemoryHold(): MemoryHold {
  return memoryHoldOf(probeCgroups(new SandboxFacts()));
}

/** "held by a memory cgroup (v1)", "an address-space cap (RLIMIT_AS): …", or "the worker's V8 heap limit". */
export function describeMemory(memory: ToolMemory): string {
  if (memory.heldBy === 'cgroup') return `held by a memory cgroup (v${String(memory.cgroupVersion)})`;
  if (memory.heldBy === 'heap') return "the worker's V8 heap limit";
  return `an address-space cap (RLIMIT_AS), not a memory cgroup: ${memory.reason ?? 'no memory controller'}`;
}
