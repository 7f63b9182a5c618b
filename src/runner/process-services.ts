// Everything one host holds for its sandboxes, built by host.ts and passed down
// to the runners and upstream servers: its spawner, the process groups it
// started, its sandbox cgroups, what it learned about the machine (SandboxFacts),
// the bound on tools keeping sandboxes prepared, and its live isolate processes.
// Nothing of it is shared between hosts, even two in one process (a reload's
// next host builds its own, and the old one's goes with it), and src/runner
// keeps no state of its own in modules (test/unit/module-state.test.ts):
// callers without a host (doctor, import, scripts, tests) build one and close it.
import type { Logger } from '../log.js';
import { sweepStaleEgressDirs } from './bwrap/egress-grant.js';
import { SandboxCgroups } from './bwrap/sandbox-cgroups.js';
import { SandboxFacts } from './bwrap/sandbox-facts.js';
import { IsolateProcesses, MAX_ISOLATE_PROCESSES } from './isolate/isolate-processes.js';
import { ProcessGroups } from './process/kill.js';
import { MAX_TOOLS_PREPARED, PreparedSandboxes, type ProcessSandboxServices } from './process/oneshot-sandboxes.js';
import { SpawnerService } from './process/spawner-client.js';

export interface ProcessServicesOptions {
  readonly logger?: Logger;
  /** One-shot tools of this host that keep sandboxes prepared at a time. */
  readonly maxToolsPrepared?: number;
  /** Isolate processes this host keeps alive at a time. */
  readonly maxIsolateProcesses?: number;
  /** How often the host looks for its finished cgroups; default once a second (sandbox-cgroups.ts). */
  readonly cgroupSweepIntervalMs?: number;
}

export class ProcessServices implements ProcessSandboxServices {
  readonly spawner: SpawnerService;
  readonly groups = new ProcessGroups();
  readonly facts = new SandboxFacts();
  readonly cgroups: SandboxCgroups;
  readonly prepared: PreparedSandboxes;
  readonly isolateProcesses: IsolateProcesses;
  /** The start's sweep of dead hosts' egress folders (how many it removed). */
  readonly sweptEgressDirs: Promise<number>;
  private closing: Promise<void> | undefined;

  constructor(options: ProcessServicesOptions = {}) {
    this.spawner = new SpawnerService(options.logger);
    this.cgroups = new SandboxCgroups(this.facts, options.cgroupSweepIntervalMs);
    this.prepared = new PreparedSandboxes(options.maxToolsPrepared ?? MAX_TOOLS_PREPARED);
    this.isolateProcesses = new IsolateProcesses(options.maxIsolateProcesses ?? MAX_ISOLATE_PROCESSES);
    // Egress folders of hosts that died without closing their grants (as cgroups are swept at first use).
    this.sweptEgressDirs = sweepStaleEgressDirs();
  }

  /** After the runners closed: kills what is left, stops the spawner, removes this host's cgroups. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.groups.close();
      this.spawner.close();
      await this.cgroups.close();
    })();
    return this.closing;
  }
}
