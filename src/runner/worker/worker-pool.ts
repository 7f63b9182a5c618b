// The Piscina pool of one `mode: worker` tool: its threads, their limits and
// environment, and what every call of the tool shares (sent once per thread,
// as workerData). Each thread serves one lane at a time (worker-lane.ts).
import { Piscina } from 'piscina';
import type { RunSpec } from '../types.js';
import type { WorkerPoolData } from '../../../sandbox/shared/messages.mjs';
import { GATE_MARKS, type CallGates } from './call-gates.js';

/** How long an idle thread beyond the first is kept (its lane, then Piscina's thread). */
export const WORKER_IDLE_TIMEOUT_MS = 30_000;

const WORKER_ENTRY_URL = new URL('../../../sandbox/worker/worker-entry.mjs', import.meta.url);

export function createWorkerPool(spec: RunSpec, shared: { readonly gates: CallGates; readonly eventChannel: string }): Piscina {
  if (spec.entryPath === undefined) throw new Error(`worker tool ${spec.name} has no entry`);
  const maxThreads = Math.max(1, spec.poolSize);
  return new Piscina({
    filename: WORKER_ENTRY_URL.href,
    // A lane's task (worker-lane.ts): one per thread, for as long as the lane is open.
    name: 'serve',
    minThreads: 1,
    maxThreads,
    idleTimeout: WORKER_IDLE_TIMEOUT_MS,
    concurrentTasksPerWorker: 1,
    // The line is ours (call-dispatch.ts): Piscina only ever holds the lanes' tasks.
    maxQueue: maxThreads,
    // Nothing reads Piscina's run/wait-time histograms; recording them costs every call.
    recordTiming: false,
    // Only the names the manifest and policy allow, never the host's whole environment.
    env: { ...spec.env },
    resourceLimits: { maxOldGenerationSizeMb: Math.max(8, spec.memoryMb) },
    workerData: {
      entryPath: spec.entryPath,
      roots: spec.roots.map((root) => ({ path: root.path, access: root.access })),
      protectedPaths: [...(spec.protectedPaths ?? [])],
      hiddenPaths: [...(spec.hiddenPaths ?? [])],
      networkAllow: [...spec.networkAllow],
      ...(spec.sideEffect !== undefined ? { sideEffect: spec.sideEffect } : {}),
      floodCapBytes: spec.floodCapBytes,
      eventChannel: shared.eventChannel,
      gates: shared.gates.buffer,
      gateMarks: GATE_MARKS,
    } satisfies WorkerPoolData,
  });
}
