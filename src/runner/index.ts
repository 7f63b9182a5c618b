// Picks the runner for a tool's sandbox mode. The supervisor's runner cache
// calls this once per tool, on the tool's first call.
import type { Logger } from '../log.js';
import { createIsolateRunner } from './isolate/isolate-runner.js';
import { createProcessRunner } from './process/process-runner.js';
import type { ProcessServices } from './process-services.js';
import type { Runner, RunSpec } from './types.js';
import type { EgressSettings } from './process/process-sandbox.js';
import { createWorkerRunner } from './worker/worker-runner.js';
import { createUpstreamRunner } from './upstream/upstream-runner.js';
import type { UpstreamServers } from './upstream/upstream-servers.js';

interface CreateRunnerDeps {
  readonly logger: Logger;
  /** The host's sandbox services (spawner, groups, cgroups, prepared sandboxes, isolate processes). */
  readonly services: ProcessServices;
  /** One-shot process tools: sandboxes to keep prepared (0: none); default by isolation. */
  readonly preparedAhead?: number;
  /** The host's upstream MCP servers; needed by tools that have `spec.upstream`. */
  readonly upstream?: UpstreamServers;
  /** Namespaced process tools with a network allow list: their egress proxies' limits and resolver. */
  readonly egress?: EgressSettings;
}

/** The runner for one tool, by `spec.mode`. */
export function createRunner(spec: RunSpec, deps: CreateRunnerDeps): Runner {
  if (spec.upstream !== undefined) {
    if (deps.upstream === undefined) throw new Error(`tool ${spec.name} belongs to an upstream server but the host has none`);
    return createUpstreamRunner({ ...spec, upstream: spec.upstream }, { logger: deps.logger, upstream: deps.upstream });
  }
  switch (spec.mode) {
    case 'isolate':
      return createIsolateRunner(spec, deps);
    case 'worker':
      return createWorkerRunner(spec, deps);
    case 'process':
      return createProcessRunner(spec, deps);
  }
}

// The runner house's front door for the rest of the host (the CLI imports only this file).
export { ProcessServices, type ProcessServicesOptions } from './process-services.js';
export { runSandboxChecks, type DoctorCheck } from './bwrap/checks.js';
export { checkIsolateProcess } from './isolate/isolate-check.js';
export type { RunSpec } from './types.js';
export { listOne, listUpstreamServers, listUpstreamServersKeeping, type Listing } from './upstream/discover.js';
export type { ServerInstance, UpstreamTool } from './upstream/server-instance.js';
export { UpstreamServers } from './upstream/upstream-servers.js';
export { uiResourceOf } from './upstream/upstream-resources.js';
export { formatStderrLines, lastStderrLines } from './upstream/stderr-tail.js';
export { memoryHoldOf, probeCgroups, type MemoryHold } from './bwrap/sandbox-cgroups.js';
export { SandboxFacts } from './bwrap/sandbox-facts.js';
