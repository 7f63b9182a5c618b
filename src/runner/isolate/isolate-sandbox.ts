// The namespace sandbox an isolate process runs in: the process sandbox of
// bubblewrap/argv.ts, built from a spec derived from the isolate tool's. Only the
// tool's roots (with their access), its manifest folder (read-only), the code
// that runs there (sandbox/, isolated-vm) and the system directories exist
// inside; a network namespace of its own with nothing in it but, for a tool
// with a network allow list, the bridge to the egress proxy of its grant
// (ctx.fetch goes out there); a cgroup holding its memory and process count, its own pid
// namespace, and it dies with the host. Fail closed: without a working
// sandbox (or, with an allow list, without its grant), no process.
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isHostError } from '../../errors.js';
import { UNREACHABLE_INSPECTOR_FLAG } from '../../node-inspector.js';
import { buildSandboxArgv, sandboxCgroupLimits } from '../bwrap/argv.js';
import type { SandboxCgroup } from '../bwrap/sandbox-cgroups.js';
import { probeSandbox } from '../bwrap/probe.js';
import type { SandboxArgvServices, SandboxEgress } from '../bwrap/argv.js';
import type { RunSpec } from '../types.js';

/** The far side's code: the isolate process imports from sandbox/isolate, sandbox/ctx and sandbox/shared, all bound read-only. */
const SANDBOX_CODE_URL = new URL('../../../sandbox/', import.meta.url);
const ISOLATE_PROCESS_URL = new URL('isolate/isolate-process.mjs', SANDBOX_CODE_URL);
export const PRELUDE_URL = new URL('isolate/isolate-prelude.mjs', SANDBOX_CODE_URL);

/** Isolates (so concurrent calls) one isolate process runs at a time; more calls queue there. */
export const MAX_ISOLATES_PER_PROCESS = 4;
/**
 * Memory of an isolate process, in MiB, held by its memory cgroup: what Node, isolated-vm and
 * the host side's own heap (--max-old-space-size below) use, plus each isolate's heap limit and
 * what an isolate uses beside its heap (code, handles, its share of the thread stacks). Each
 * isolate's own heap limit is the tool's memoryMb: this is the process's ceiling behind those.
 */
const PROCESS_RESIDENT_BASE_MB = 320;
const PER_ISOLATE_RESIDENT_MB = 32;
/**
 * Address space of an isolate process, in MiB, where no memory controller can be used
 * (RLIMIT_AS, the fallback): Node and isolated-vm reserve about 1.1 GiB of virtual memory, and
 * each isolate about 600 MiB more (V8's code range and heap reservations) beyond its heap limit.
 * Measured with Node 20 and isolated-vm 5.0.4: one isolate needs RLIMIT_AS ≥ 2 GiB, four ≥ 4 GiB.
 */
const PROCESS_BASE_MB = 1536;
const PER_ISOLATE_RESERVE_MB = 640;
/** CPU seconds the process may use in its life; past it, it is killed and replaced. */
const ISOLATE_PROCESS_CPU_SECONDS = 3600;
/** Threads of Node, libuv, V8 and isolated-vm (about 14 with four isolates), with room. */
const ISOLATE_PROCESS_MAX_TASKS = 96;
/**
 * Node flags of the isolate process: isolated-vm needs the snapshot off; a small young generation.
 * No WebAssembly anywhere in it (--no-expose-wasm, and --no-validate-asm, without which V8 still
 * builds the WebAssembly object for asm.js): every fresh context skips building an object the
 * harden script would delete (about a tenth of a context's cost), and the process's own Node
 * context has none either (its HTTP parser is native; nothing there compiles WebAssembly).
 * An inspector that can never listen (node-inspector.ts).
 */
export const ISOLATE_PROCESS_NODE_FLAGS = [
  '--no-node-snapshot',
  '--max-semi-space-size=2',
  '--max-old-space-size=256',
  '--no-expose-wasm',
  '--no-validate-asm',
  UNREACHABLE_INSPECTOR_FLAG,
] as const;
/** The environment variable naming the tool inside: a marker for diagnostics and tests. */
export const ISOLATE_TOOL_ENV = 'TOOLHOST_ISOLATE_TOOL';

type IsolateSandbox =
  | {
      readonly ok: true;
      readonly argv: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      /** Its memory ceiling in MiB: held by its cgroup, or the address-space cap where no memory controller is used. */
      readonly memoryMb: number;
      /** Its cgroup (the memory it was held to, its OOM kills); undefined without one. */
      readonly cgroup: SandboxCgroup | undefined;
    }
  | { readonly ok: false; readonly reason: string };

interface IsolateSandboxRequest {
  /** Absolute working directory (the first root, or a private directory). */
  readonly cwd: string;
  readonly bwrapPath?: string;
  /** The host's sandbox cgroups and machine facts (its ProcessServices). */
  readonly services: SandboxArgvServices;
  /** The tool's egress grant (a tool with a network allow list): its socket is bound in and bridged. */
  readonly egress?: SandboxEgress;
}

/** The memory cgroup limit of the isolate process for a tool's heap limit, in MiB. */
function isolateProcessMemoryMb(memoryMb: number): number {
  return PROCESS_RESIDENT_BASE_MB + MAX_ISOLATES_PER_PROCESS * (PER_ISOLATE_RESIDENT_MB + Math.max(8, memoryMb));
}

/** The address-space cap of the isolate process for a tool's heap limit, where RLIMIT_AS is the fallback. */
function isolateProcessAddressSpaceMb(memoryMb: number): number {
  return PROCESS_BASE_MB + MAX_ISOLATES_PER_PROCESS * (PER_ISOLATE_RESERVE_MB + Math.max(8, memoryMb));
}

/** The full argv that starts the isolate process for `spec` in its sandbox, or why it cannot. */
export async function resolveIsolateSandbox(spec: RunSpec, request: IsolateSandboxRequest): Promise<IsolateSandbox> {
  const bwrap = request.bwrapPath !== undefined ? { bwrapPath: request.bwrapPath } : {};
  const probe = await probeSandbox(request.services.facts, bwrap);
  if (!probe.ok) return { ok: false, reason: probe.reason };
  const processSpec = isolateProcessSpec(spec);
  // No grant, no network: buildSandboxArgv would give an allow list without one nothing anyway.
  if (processSpec.networkAllow.length > 0 && request.egress === undefined) return { ok: false, reason: 'a tool with a network allow list needs its egress grant' };
  const limits = { cpuSeconds: ISOLATE_PROCESS_CPU_SECONDS, processes: ISOLATE_PROCESS_MAX_TASKS };
  const cgroup = request.services.cgroups.create(sandboxCgroupLimits(processSpec, limits, request.egress));
  try {
    const addressSpaceMb = isolateProcessAddressSpaceMb(spec.memoryMb);
    const prefix = buildSandboxArgv(processSpec, {
      cwd: request.cwd,
      services: request.services,
      ...bwrap,
      limits,
      addressSpaceMb,
      ...(cgroup === undefined ? {} : { cgroup }),
      ...(request.egress !== undefined ? { egress: request.egress } : {}),
    });
    const memoryMb = cgroup?.memoryBytes === undefined ? addressSpaceMb : processSpec.memoryMb;
    return { ok: true, argv: [...prefix, ...(processSpec.command ?? [])], env: processSpec.env, memoryMb, cgroup };
  } catch (error) {
    if (cgroup !== undefined) await request.services.cgroups.remove(cgroup);
    if (isHostError(error) && error.code === 'sandbox_unavailable') {
      const reason = error.details['reason'];
      return { ok: false, reason: typeof reason === 'string' ? reason : 'the sandbox cannot be built' };
    }
    throw error;
  }
}

/**
 * isolated-vm's main file, resolved where the host loads packages from (bound
 * read-only inside). Resolved at each isolate-process start (a lookup and a
 * realpath, next to a process start of about half a second), not remembered.
 */
export function resolveIsolatedVm(): string {
  return realpathSync(createRequire(import.meta.url).resolve('isolated-vm'));
}

/**
 * The process-tool spec the sandbox is built from. The code that runs inside is
 * added as read-only roots of the sandbox only: ctx.fs still sees just the tool's.
 * networkAllow is the tool's: with one, the process's only way out is its grant's proxy.
 */
function isolateProcessSpec(spec: RunSpec): RunSpec {
  const sandboxDir = realpathSync(fileURLToPath(SANDBOX_CODE_URL));
  const ivmDir = dirname(resolveIsolatedVm());
  const covered = (dir: string) => spec.roots.some((root) => root.path === dir);
  return Object.freeze({
    ...spec,
    mode: 'process',
    isolation: 'namespace',
    persistent: true,
    command: [process.execPath, ...ISOLATE_PROCESS_NODE_FLAGS, fileURLToPath(ISOLATE_PROCESS_URL)],
    memoryMb: isolateProcessMemoryMb(spec.memoryMb),
    env: { PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin', [ISOLATE_TOOL_ENV]: spec.name },
    networkAllow: [...spec.networkAllow],
    roots: [
      ...spec.roots,
      ...(covered(sandboxDir) ? [] : [{ path: sandboxDir, access: 'read' as const }]),
      ...(covered(ivmDir) ? [] : [{ path: ivmDir, access: 'read' as const }]),
    ],
  });
}
