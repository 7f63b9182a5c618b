// Starts an isolate process (sandbox/isolate/isolate-process.mjs) for one tool:
// its egress grant when the tool has a network allow list, its namespace
// sandbox through the host's spawner, its configuration as the first frame,
// then waits until its first context is ready. Fail closed: what cannot start
// is cleaned up (workdir, grant, process group) and reported, never half-run.
import { stageTimesOn } from '../../diagnostics/stage-times.js';
import type { Logger } from '../../log.js';
import { encodeFrame } from '../../../sandbox/shared/frames.mjs';
import { START_TOP_LEVEL_TIMEOUT_MS } from '../../../sandbox/shared/limits.mjs';
import type { HostToIsolateMessage } from '../../../sandbox/shared/messages.mjs';
import { START_LINE } from '../bwrap/argv.js';
import { openEgressGrant, type EgressGrant } from '../bwrap/egress-grant.js';
import { SANDBOX_PROXY_URL } from '../bwrap/egress-bridge.js';
import { killProcessGroupNow } from '../process/kill.js';
import { openWorkdir, spawnTool, type SpawnedTool } from '../process/spawn.js';
import type { EgressSettings, SandboxedSpawnServices } from '../process/process-sandbox.js';
import type { RunSpec } from '../types.js';
import type { IsolateStartResult } from './isolate-start.js';
import { IsolateProcess } from './isolate-process.js';
import { MAX_ISOLATES_PER_PROCESS, PRELUDE_URL, resolveIsolatedVm, resolveIsolateSandbox } from './isolate-sandbox.js';
import { fileURLToPath } from 'node:url';

/**
 * How long a process may take to start, prepare its first context and run the tool's top
 * level: the top level's own bound over there, and as long again to load (a top level cut at
 * its bound still lets the process start, and its calls run their own).
 */
const ISOLATE_START_TIMEOUT_MS = 2 * START_TOP_LEVEL_TIMEOUT_MS;

/** A started process, or why not (`verdict`: the tool's module made the start fail; see isolate-start.ts). */
export type IsolateProcessStart = { readonly ok: true; readonly process: IsolateProcess } | Extract<IsolateStartResult, { ok: false }>;

interface IsolateProcessDeps {
  readonly logger: Logger;
  readonly bwrapPath?: string;
  /** The host's spawner, groups, cgroups and machine facts. */
  readonly services: IsolateSandboxServices;
  /** Tools with a network allow list: their egress proxy's limits and resolver. */
  readonly egress?: EgressSettings;
}

/** What starting an isolate process goes through (a host's ProcessServices). */
export type IsolateSandboxServices = SandboxedSpawnServices;

/** Starts an isolate process for `spec` and waits until its first context is ready. */
export async function startIsolateProcess(spec: RunSpec, deps: IsolateProcessDeps): Promise<IsolateProcessStart> {
  if (spec.entryPath === undefined) return { ok: false, reason: `isolate tool ${spec.name} has no entry` };
  const workdir = await openWorkdir(spec);
  let tool: SpawnedTool | undefined;
  let grant: EgressGrant | undefined;
  try {
    if (spec.networkAllow.length > 0) {
      try {
        grant = await openEgressGrant({
          allow: spec.networkAllow,
          readOnly: spec.sideEffect === 'read_only',
          logger: deps.logger,
          perCall: true,
          ...(deps.egress?.limits === undefined ? {} : { limits: deps.egress.limits }),
          ...(deps.egress?.resolve === undefined ? {} : { resolve: deps.egress.resolve }),
        });
      } catch (error) {
        await workdir.dispose();
        return { ok: false, reason: `the egress proxy could not start: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    const sandbox = await resolveIsolateSandbox(spec, {
      cwd: workdir.cwd,
      services: deps.services,
      ...(deps.bwrapPath !== undefined ? { bwrapPath: deps.bwrapPath } : {}),
      ...(grant !== undefined ? { egress: grant } : {}),
    });
    if (!sandbox.ok) {
      await Promise.all([workdir.dispose(), grant?.close()]);
      return { ok: false, reason: sandbox.reason };
    }
    tool = await spawnTool(sandbox.argv, sandbox.env, workdir.cwd, deps.services);
    if (tool.pid === undefined) {
      await Promise.all([workdir.dispose(), grant?.close()]);
      const exit = await tool.exited;
      return { ok: false, reason: `the isolate process could not be spawned (${exit.kind === 'spawn_failed' ? exit.errorCode : 'exited'})` };
    }
    const { cgroup } = sandbox;
    const started = new IsolateProcess(spec, tool, workdir, deps.logger, grant, () => deps.services.cgroups.oomKills(cgroup));
    const init: HostToIsolateMessage = {
      type: 'init',
      toolName: spec.name,
      ivmPath: resolveIsolatedVm(),
      entryPath: spec.entryPath,
      preludePath: fileURLToPath(PRELUDE_URL),
      memoryMb: spec.memoryMb,
      floodCapBytes: spec.floodCapBytes,
      maxIsolates: MAX_ISOLATES_PER_PROCESS,
      roots: spec.roots.map((root) => ({ path: root.path, access: root.access })),
      protectedPaths: [...(spec.protectedPaths ?? [])],
      hiddenPaths: [...(spec.hiddenPaths ?? [])],
      ...(spec.sideEffect !== undefined ? { sideEffect: spec.sideEffect } : {}),
      ...(grant !== undefined ? { egress: { proxyUrl: SANDBOX_PROXY_URL, allow: [...spec.networkAllow] } } : {}),
      ...(stageTimesOn() ? { stageTimes: true } : {}),
    };
    tool.stdin.write(START_LINE);
    tool.stdin.write(encodeFrame(init));
    const ready = await started.whenReady(ISOLATE_START_TIMEOUT_MS);
    if (!ready.ok) {
      started.kill();
      return ready;
    }
    return { ok: true, process: started };
  } catch (error) {
    if (tool?.pid !== undefined) killProcessGroupNow(tool.pid);
    await Promise.all([workdir.dispose(), grant?.close()]);
    throw error;
  }
}
