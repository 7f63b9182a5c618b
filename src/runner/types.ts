// One interface for the three sandbox modes. A runner is built per tool from
// its RunSpec (the manifest after the policy's effective limits are applied).
import type { SandboxMode } from '../registry/manifest.js';
import type { Job, RunOptions, RunOutcome } from './run-types.js';

// The modes, root access and the RunSpec are the manifest's words (registry/); runners read them.
export type { RootAccess, SandboxMode } from '../registry/manifest.js';
export type { RunSpec, UpstreamRef, WorkspaceRoot } from '../registry/run-spec.js';

export interface Runner {
  readonly mode: SandboxMode;
  run(job: Job, options: RunOptions): Promise<RunOutcome>;
  /** Stops pools and kills every process; idempotent. */
  close(): Promise<void>;
  /** Settles once what the runner starts ahead is up (an isolate runner: its isolate process); for warming. */
  ready?(): Promise<void>;
}
