// How list and explain say what holds a tool's memoryMb: a memory cgroup, the
// address-space fallback with its reason, or a worker's heap limit.
import { describe, expect, it } from 'vitest';
import { describeMemory } from '../../../src/cli/memory-hold.js';

describe('describeMemory', () => {
  it('names the cgroup version, the fallback and why, or the heap limit', () => {
    expect(describeMemory({ heldBy: 'cgroup', cgroupVersion: 2, reason: null })).toBe('held by a memory cgroup (v2)');
    expect(describeMemory({ heldBy: 'address_space', cgroupVersion: null, reason: 'no memory cgroup controller is mounted' })).toBe(
      'an address-space cap (RLIMIT_AS), not a memory cgroup: no memory cgroup controller is mounted',
    );
    expect(describeMemory({ heldBy: 'heap', cgroupVersion: null, reason: null })).toBe("the worker's V8 heap limit");
  });
});
