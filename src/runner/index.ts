// Picks the runner for a tool's sandbox mode. The supervisor's runner cache
// calls this once per tool, on the tool's first call.
import type { Logger } from '../log.js';
import { createIsolateRunner } from './isolate/isolate-runner.js';
import { createProcessRunner } from './process/process-runner.js';
import type { ProcessServices } from './process-services.js';
import type { Runner, RunSpec } from './types.js';
import type { EgressSettings } from './process/process-sandbox.js';
import { createWorkerRunner } from './worker/worker-runner.js';

export interface CreateRunnerDeps {
  readonly logger: Logger;
  /** The host's sandbox services (spawner, groups, cgroups, prepared sandboxes, isolate processes). */
  readonly services?: ProcessServices;
  /** One-shot process tools: sandboxes to keep prepared (0: none); default by isolation. */
  readonly preparedAhead?: number;
  /** Namespaced process tools with a network allow list: their egress proxies' limits and resolver. */
  readonly egress?: EgressSettings;
}

/** The runner for one tool, by `spec.mode`. */
export function createRunner(spec: RunSpec, deps: CreateRunnerDeps): Runner {
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
