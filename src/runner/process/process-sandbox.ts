// The seam where the bubblewrap wrapper (bwrap/argv.ts) slots in front of a
// process tool's argv. Every process tool runs in its own pid namespace, in
// both isolation modes: when the namespace's init dies the kernel kills
// everything in it, the only thing that reaches descendants that left the
// process group (setsid, double fork). A namespaced tool with a network
// allow list gets its own egress grant (bwrap/egress-grant.ts), closed with
// its workdir. Fail closed: no working sandbox, no run.
import { recordSandboxStartWork } from '../../diagnostics/event-loop.js';
import { isHostError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { RunSpec } from '../types.js';
import { buildSandboxArgv, sandboxCgroupLimits } from '../bwrap/argv.js';
import { openEgressGrant, type EgressGrant, type EgressLimits } from '../bwrap/egress-grant.js';
import { probeSandbox } from '../bwrap/probe.js';
import type { SandboxArgvServices } from '../bwrap/argv.js';
import type { SandboxCgroup } from '../bwrap/sandbox-cgroups.js';
import { computeSandboxLimits } from '../bwrap/rlimits.js';
import type { SandboxSetup, SpawnServices, Workdir } from './spawn.js';

/** What starting a sandboxed process goes through: the host's spawner, groups, cgroups and machine facts (its ProcessServices). */
export interface SandboxedSpawnServices extends SpawnServices, SandboxArgvServices {}

type SandboxArgv =
  | {
      readonly ok: true;
      readonly argv: readonly string[];
      readonly egress: EgressGrant | undefined;
      /** The process's cgroup: its owner reads its OOM kills and may remove it once the process has ended (the sweep does otherwise). */
      readonly cgroup: SandboxCgroup | undefined;
    }
  | { readonly ok: false; readonly reason: string };

/** How the egress proxies of a runner's processes are set up (defaults for real use). */
export interface EgressSettings {
  readonly limits?: Partial<EgressLimits>;
  /** Resolves names for the proxy (a seam for tests: names that resolve to loopback); default the system resolver. */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
}

interface SandboxArgvRequest {
  /** Absolute working directory (the first root, or a private directory). */
  readonly cwd: string;
  /** namespace: `cwd` is made inside the sandbox's private /tmp, not bound from the host (see buildSandboxArgv). */
  readonly cwdInPrivateTmp?: boolean;
  /** The caller removes the sandbox's cgroup once the sandbox has ended (SandboxCgroups.remove): the host's periodic sweep leaves it alone. */
  readonly removesCgroup?: boolean;
  /** The call's timeout (sets the CPU limit); absent for a persistent process. */
  readonly timeoutMs?: number;
  /** A specific bubblewrap binary (a seam for tests and odd installs); default `bwrap` on PATH. */
  readonly bwrapPath?: string;
  /** The host's sandbox cgroups and machine facts (its ProcessServices). */
  readonly services: SandboxArgvServices;
  readonly logger: Logger;
  /** RLIMIT_AS in MiB where no memory controller holds the process (a runtime's allowance); default spec.memoryMb. */
  readonly addressSpaceMb?: number;
  readonly egress?: EgressSettings;
}

/** The full argv for a process tool (sandbox prefix + command) and its egress grant, or why it cannot run isolated. */
export async function resolveSandboxArgv(spec: RunSpec, request: SandboxArgvRequest): Promise<SandboxArgv> {
  const command = spec.command ?? [];
  if (command.length === 0 || command[0] === '') return { ok: false, reason: 'the manifest has no command' };
  const bwrap = request.bwrapPath !== undefined ? { bwrapPath: request.bwrapPath } : {};
  const probe = await probeSandbox(request.services.facts, bwrap);
  if (!probe.ok) return { ok: false, reason: probe.reason };
  let egress: EgressGrant | undefined;
  if (spec.isolation === 'namespace' && spec.networkAllow.length > 0) {
    try {
      egress = await openEgressGrant({
        allow: spec.networkAllow,
        readOnly: spec.sideEffect === 'read_only',
        logger: request.logger.child({ tool: spec.name }),
        // Ordinary TCP clients of the tool reach its allowed destinations too (egress-network.ts).
        direct: true,
        ...(request.egress?.limits === undefined ? {} : { limits: request.egress.limits }),
        ...(request.egress?.resolve === undefined ? {} : { resolve: request.egress.resolve }),
      });
    } catch (error) {
      return { ok: false, reason: `the egress proxy could not start: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  // Made in the thread pool: sandboxes are started ahead, beside calls this event loop serves.
  const { cgroups } = request.services;
  let cgroup: SandboxCgroup | undefined;
  try {
    cgroup = await cgroups.createAsync(sandboxCgroupLimits(spec, computeSandboxLimits(spec, request.timeoutMs), egress), { ownerRemoves: request.removesCgroup === true });
  } catch (error) {
    await egress?.close();
    throw error;
  }
  let prefix: string[];
  const workStartedMs = performance.now();
  try {
    prefix = buildSandboxArgv(spec, {
      cwd: request.cwd,
      ...(request.cwdInPrivateTmp === true ? { cwdInPrivateTmp: true } : {}),
      services: request.services,
      ...bwrap,
      ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
      ...(request.addressSpaceMb !== undefined ? { addressSpaceMb: request.addressSpaceMb } : {}),
      ...(cgroup === undefined ? {} : { cgroup }),
      ...(egress === undefined ? {} : { egress }),
    });
  } catch (error) {
    await Promise.all([egress?.close(), cgroup === undefined ? undefined : cgroups.remove(cgroup)]);
    if (isHostError(error) && error.code === 'sandbox_unavailable') {
      const reason = error.details['reason'];
      return { ok: false, reason: typeof reason === 'string' ? reason : 'the sandbox cannot be built' };
    }
    throw error;
  } finally {
    recordSandboxStartWork(performance.now() - workStartedMs);
  }
  // No descriptor closer: tools are started by the spawner, which closed the host's inheritable ones.
  return { ok: true, argv: [...prefix, ...command], egress, cgroup };
}

/** What spawnTool sets up in a sandbox with this grant before its gate opens: the address literals its clients reach. */
export function sandboxSetupOf(egress: EgressGrant | undefined): SandboxSetup {
  const addresses = egress?.network?.addedAddresses ?? [];
  return addresses.length === 0 ? {} : { loopbackAddresses: addresses };
}

/** `workdir`, whose dispose() also closes the process's egress grant (both end with the process). */
export function withEgress(workdir: Workdir, egress: EgressGrant | undefined): Workdir {
  if (egress === undefined) return workdir;
  return { ...workdir, dispose: () => Promise.all([egress.close(), workdir.dispose()]).then(() => undefined) };
}
