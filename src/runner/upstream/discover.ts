// Reads what each upstream server offers (SPEC section 2.1): starts it in its
// sandbox (the read-only probe profile), completes the handshake and reads
// tools/list within startupTimeoutMs, then stops it. A server that cannot is a
// listing failure naming why; the caller decides whether that is fatal.
import type { Logger } from '../../log.js';
import type { RunSpec } from '../types.js';
import { ServerInstance, type UpstreamTool } from './server-instance.js';
import { DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES } from './upstream-servers.js';
import type { SandboxedSpawnServices } from '../process/process-sandbox.js';

/** What a server listed, or why it could not, with the last lines of its stderr (stderr-tail.ts). */
export type Listing =
  | { readonly ok: true; readonly tools: readonly UpstreamTool[]; readonly truncated: boolean }
  | { readonly ok: false; readonly reason: string; readonly stderrLines?: readonly string[] };

interface DiscoverDeps {
  readonly logger: Logger;
  /** The services of the host that lists (and may keep) the servers; a caller without a host builds its own. */
  readonly services: SandboxedSpawnServices;
  readonly bwrapPath?: string;
  /** Redacts and cuts what a server logs before the host's log gets it. */
  readonly redactLog?: (text: string, maxChars: number) => string;
}

/**
 * The listing of every server in `probes` (by server name) that `only` selects (default:
 * all), read in parallel; the servers are stopped.
 */
export async function listUpstreamServers(probes: ReadonlyMap<string, RunSpec>, deps: DiscoverDeps, only?: (server: string) => boolean): Promise<Map<string, Listing>> {
  const selected = only ? new Map([...probes].filter(([server]) => only(server))) : probes;
  const { listings } = await listUpstreamServersKeeping(selected, deps, false);
  return listings;
}

/**
 * Like listUpstreamServers; with `keep`, each server that listed stays running and is
 * returned, so a host can serve its first calls with it (the caller then owns it).
 */
export async function listUpstreamServersKeeping(
  probes: ReadonlyMap<string, RunSpec>,
  deps: DiscoverDeps,
  keep: boolean,
): Promise<{ listings: Map<string, Listing>; instances: Map<string, ServerInstance> }> {
  const instances = new Map<string, ServerInstance>();
  const entries = await Promise.all(
    [...probes].map(async ([server, spec]) => {
      const listing = await listOne(spec, deps, keep ? (instance) => instances.set(server, instance) : undefined);
      return [server, listing] as const;
    }),
  );
  return { listings: new Map(entries), instances };
}

/** Starts one server, reads its tools and stops it (or hands it to `keep` when it listed). */
export async function listOne(spec: RunSpec, deps: DiscoverDeps, keep?: (instance: ServerInstance) => void): Promise<Listing> {
  const startupTimeoutMs = spec.upstream?.startupTimeoutMs ?? 20_000;
  const startedAt = performance.now();
  const started = await ServerInstance.start({ run: spec, startupTimeoutMs, maxMessageBytes: DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES }, deps);
  if (!started.ok) return { ok: false, reason: `the server did not start: ${started.reason}`, ...(started.stderrLines ? { stderrLines: started.stderrLines } : {}) };
  try {
    const leftMs = Math.max(1, startupTimeoutMs - (performance.now() - startedAt));
    const listed = await started.instance.listTools(leftMs);
    if (listed.ok && keep) {
      keep(started.instance);
      return listed;
    }
    const end = await started.instance.killAndWait();
    // A server that died while it listed (a runtime that cannot start its WebAssembly, a crash) says why on stderr.
    return listed.ok ? listed : { ok: false, reason: listed.reason, stderrLines: started.instance.stderrLines(end) };
  } catch (error) {
    await started.instance.killAndWait();
    throw error;
  }
}
