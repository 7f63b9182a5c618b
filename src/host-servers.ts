// The host configuration with its upstream servers' tools (SPEC section 2.1):
// a first load finds the `kind: Server` manifests and how each may start, the
// servers are started in their sandboxes and listed, and the second load turns
// the listings into tools. serve, validate and list all come through here.
import { loadHostConfig, type HostConfig, type LoadHostConfigOptions } from './host-config.js';
import type { Logger } from './log.js';
import type { UpstreamServers } from './runner/index.js';
import { listOne, listUpstreamServers, listUpstreamServersKeeping, ProcessServices, type Listing, type RunSpec, type ServerInstance } from './runner/index.js';
import type { ServerListing } from './registry/server-tools.js';
import type { ToolSchemaCompiler } from './registry/ajv.js';
import { precheckListing } from './registry/listing-precheck.js';
import { createRedactor } from './supervisor/redact.js';

/** The servers a command about one tool needs started: the one whose `<server>__` prefix the name has. */
export function serverOfTool(tool: string): (server: string) => boolean {
  return (server) => tool.startsWith(`${server}__`);
}

/**
 * Listings known without starting a server (by server name), e.g. the pins of a lock
 * (SPEC section 4.2): a server with a listing here is not started to be listed.
 */
export type ListingSource = (first: HostConfig) => ReadonlyMap<string, ServerListing> | undefined;

/**
 * loadHostConfig, with each upstream server started once to read its tools
 * (validate, list: no host, so the servers go through services of their own,
 * closed once they are listed and stopped).
 */
export async function loadHostConfigWithServers(options: LoadHostConfigOptions, deps: ServerListingDeps): Promise<HostConfig> {
  const first = loadHostConfig(options);
  return loadServersOf(first, options, deps);
}

interface ServerListingDeps {
  readonly logger: Logger;
  /** Start only the servers this selects; the others offer no tool. Default: all. */
  readonly only?: (server: string) => boolean;
  /** Listings known without a start (a lock's pins); those servers are not started. */
  readonly known?: ListingSource;
}

/**
 * The second half of loadHostConfigWithServers, for a caller that loaded `first` already
 * (to pick the servers it needs from it). Servers `only` leaves out offer no tool.
 */
export async function loadServersOf(first: HostConfig, options: LoadHostConfigOptions, deps: ServerListingDeps): Promise<HostConfig> {
  if (first.serverProbes.size === 0 || first.problems.length > 0) return first;
  const known = deps.known?.(first) ?? new Map<string, ServerListing>();
  const only = (server: string): boolean => !known.has(server) && (deps.only?.(server) ?? true);
  if (![...first.serverProbes.keys()].some(only)) return known.size === 0 ? first : loadHostConfig({ ...options, serverListings: known });
  const services = new ProcessServices({ logger: deps.logger });
  try {
    const started = await listUpstreamServers(first.serverProbes, { logger: deps.logger, services, redactLog: logRedactorOf(first) }, only);
    return loadHostConfig({ ...options, serverListings: new Map([...known, ...started]) });
  } finally {
    await services.close();
  }
}

/**
 * The same, keeping each server that listed running (by server name) so the host can
 * serve its first calls with it instead of starting it again; the caller owns them.
 * They are started through the host's `services`, whose groups track them from the start.
 */
export async function loadHostConfigKeepingServers(
  options: LoadHostConfigOptions,
  deps: { readonly logger: Logger; readonly services: ProcessServices; readonly only?: (server: string) => boolean },
): Promise<{ config: HostConfig; instances: Map<string, ServerInstance> }> {
  const first = loadHostConfig(options);
  if (first.serverProbes.size === 0 || first.problems.length > 0) return { config: first, instances: new Map() };
  const { only } = deps;
  const probes = only ? new Map([...first.serverProbes].filter(([server]) => only(server))) : first.serverProbes;
  if (probes.size === 0) return { config: first, instances: new Map() };
  const { listings, instances } = await listUpstreamServersKeeping(probes, { logger: deps.logger, services: deps.services, redactLog: logRedactorOf(first) }, true);
  return { config: loadHostConfig({ ...options, serverListings: listings }), instances };
}

// What a server logs while it is listed (and after, when the host keeps it) is redacted like
// the rest of the host's log of tools: the secret values of the host's environment, host paths.
function logRedactorOf(config: HostConfig): (text: string, maxChars: number) => string {
  const redact = createRedactor({ secretValues: config.secretValues(), visibleRoots: [config.workspace] });
  return (text, maxChars) => redact.cut(text, maxChars);
}

interface ServerStartupDeps {
  readonly logger: Logger;
  /** The host's services: the servers are its processes from the start. */
  readonly services: ProcessServices;
  readonly upstream: UpstreamServers;
  /** Redacts and cuts what a server logs (and its stderr tail) before anyone sees it. */
  readonly redactLog: (text: string, maxChars: number) => string;
  /** What each server listed in the host this one replaces: kept when the server does not start now. */
  readonly known?: ReadonlyMap<string, ServerListing>;
  /**
   * Puts the listings so far in force (the host's new configuration and supervisor). `listed`:
   * the running instances of the servers that just listed, for the host to adopt (or kill);
   * `batch`: the servers whose listing is new. Called once per batch, never after close().
   */
  readonly rebuild: (listings: ReadonlyMap<string, ServerListing>, listed: ReadonlyMap<string, ServerInstance>, batch: ReadonlySet<string>) => void;
  /** The compiler the rebuild loads with: a listing's schemas are compiled into it first, in slices. */
  readonly schemaCompiler: ToolSchemaCompiler;
}

/**
 * serve's fast start (SPEC section 2.1): the host answers at once and starts its servers in
 * the background, each in its sandbox within its startupTimeoutMs. A server's tools go in
 * force as soon as it lists (listings that arrive in one turn share one rebuild); a server
 * that does not start is recorded so its calls fail `sandbox_unavailable` with the reason
 * and its stderr tail, after a backoff rather than a start per call. A later
 * tools/list_changed (or a start after a failure) lists the server again, through the same
 * rebuild, without restarting anything.
 */
export class ServerStartup {
  readonly #listings = new Map<string, ServerListing>();
  /** Servers not yet listed for the first time: settled once their tools are in force. */
  readonly #starting = new Map<string, { readonly promise: Promise<void>; readonly resolve: () => void }>();
  /** Listings and instances that came in since the last rebuild. */
  #batch = new Map<string, ServerInstance | undefined>();
  #isScheduled = false;
  #isClosed = false;
  readonly #unsubscribe: () => void;

  constructor(private readonly deps: ServerStartupDeps) {
    this.#unsubscribe = deps.upstream.onToolsChanged((server, listing) => this.#relisted(server, listing));
  }

  /** Starts every server of `probes` (by name) in the background. */
  start(probes: ReadonlyMap<string, RunSpec>): void {
    for (const server of probes.keys()) {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((done) => (resolve = done));
      this.#starting.set(server, { promise, resolve });
    }
    for (const [server, spec] of probes) {
      let kept: ServerInstance | undefined;
      listOne(spec, { logger: this.deps.logger, services: this.deps.services, redactLog: this.deps.redactLog }, (instance) => (kept = instance))
        .catch((error: unknown): Listing => ({ ok: false, reason: `the server could not be started: ${error instanceof Error ? error.message : String(error)}` }))
        .then((listing) => this.#listed(server, listing, kept))
        .catch((error: unknown) => this.deps.logger.error({ server, err: String(error) }, 'upstream server listing failed'));
    }
  }

  /** Resolves once every server has listed or failed for the first time. */
  whenAllListed(): Promise<void> {
    if (this.#starting.size === 0) return Promise.resolve();
    return Promise.all([...this.#starting.values()].map((entry) => entry.promise)).then(() => undefined);
  }

  /** For `<server>__…` of a server not yet listed: resolves once its tools are in force; else undefined. */
  whenToolReady(name: string): Promise<void> | undefined {
    if (this.#starting.size === 0) return undefined;
    const separator = name.indexOf('__');
    return separator > 0 ? this.#starting.get(name.slice(0, separator))?.promise : undefined;
  }

  /** What each server listed so far. */
  listings(): ReadonlyMap<string, ServerListing> {
    return this.#listings;
  }

  /** Stops: no rebuild after this; instances not yet adopted are killed. */
  async close(): Promise<void> {
    this.#isClosed = true;
    this.#unsubscribe();
    const instances = [...this.#batch.values()].filter((instance): instance is ServerInstance => instance !== undefined);
    this.#batch.clear();
    for (const entry of this.#starting.values()) entry.resolve();
    await Promise.allSettled(instances.map((instance) => instance.killAndWait()));
  }

  #listed(server: string, listing: Listing, instance: ServerInstance | undefined): void {
    if (this.#isClosed) {
      instance?.kill();
      return;
    }
    if (listing.ok) {
      void this.#precheckThen(
        listing,
        () => {
          this.#listings.set(server, listing);
          this.#batch.set(server, instance);
          this.#schedule();
        },
        () => instance?.kill(),
      );
      return;
    } else {
      this.deps.upstream.noteStartFailure(server, { reason: listing.reason, ...(listing.stderrLines !== undefined ? { stderrLines: listing.stderrLines } : {}) });
      // Tools it listed before (a reload) stay offered, failing with the reason, rather than vanish.
      const known = this.deps.known?.get(server);
      this.#listings.set(server, known?.ok === true ? known : listing);
    }
    this.#batch.set(server, instance);
    this.#schedule();
  }

  // A tools/list_changed, or a start after a failure: the new listing replaces the old one;
  // a listing that fails keeps the tools in force (their calls fail with the server's reason).
  #relisted(server: string, listing: Listing): void {
    if (this.#isClosed || this.#starting.has(server)) return;
    if (!listing.ok) {
      this.deps.logger.warn({ server, reason: listing.reason }, 'upstream server could not be listed again; its tools stay as they were');
      return;
    }
    void this.#precheckThen(listing, () => {
      this.#listings.set(server, listing);
      if (!this.#batch.has(server)) this.#batch.set(server, undefined);
      this.#schedule();
    });
  }

  // The listing's schemas are compiled one tool per turn before the rebuild, which then finds them cached.
  async #precheckThen(listing: Extract<Listing, { ok: true }>, then: () => void, onClosed: () => void = () => undefined): Promise<void> {
    try {
      await precheckListing(listing.tools, this.deps.schemaCompiler, () => this.#isClosed);
    } catch (error) {
      this.deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'checking an upstream listing failed');
    }
    if (this.#isClosed) return onClosed();
    then();
  }

  // Listings that arrive in one turn share one rebuild (one configuration load, one list_changed).
  #schedule(): void {
    if (this.#isScheduled) return;
    this.#isScheduled = true;
    setImmediate(() => {
      this.#isScheduled = false;
      if (this.#isClosed) return;
      const batch = this.#batch;
      this.#batch = new Map();
      const listed = new Map([...batch].filter((entry): entry is [string, ServerInstance] => entry[1] !== undefined));
      try {
        this.deps.rebuild(this.#listings, listed, new Set(batch.keys()));
      } catch (error) {
        this.deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'applying upstream server listings failed');
        for (const instance of listed.values()) instance.kill();
      }
      for (const server of batch.keys()) {
        this.#starting.get(server)?.resolve();
        this.#starting.delete(server);
      }
    });
  }
}
