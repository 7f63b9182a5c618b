// The upstream servers of one host (STYLE: per-host state, built by host.ts):
// one ServerSlot per server profile, shared by every tool of that server and
// profile, all killed when the host closes.
import type { Logger } from '../../log.js';
import type { RunSpec, UpstreamRef } from '../types.js';
import type { ServerInstance, UpstreamTool } from './server-instance.js';
import { ServerSlot, type SlotDeps } from './server-slot.js';
import { UpstreamResources, type UpstreamResource } from './upstream-resources.js';

/** Largest JSON-RPC message an upstream server may send: a result is bounded before it is parsed. */
export const DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface UpstreamServersOptions extends SlotDeps {
  readonly maxMessageBytes?: number;
  /**
   * Digest of each server's listing as loaded (by server name). A tools/list_changed whose
   * new listing has the same digest is not a change (servers send one after start-up);
   * only a real change reaches the listeners. Absent: every notification does.
   */
  readonly fingerprints?: ReadonlyMap<string, string>;
  /** The digest function (registry/server-tools.ts fingerprintListing). */
  readonly fingerprint?: (tools: readonly UpstreamTool[]) => string;
}


export class UpstreamServers {
  readonly #slots = new Map<string, ServerSlot>();
  /** Links and MCP Apps resources: which server answers a resources/read (only those are forwarded). */
  readonly #resources = new UpstreamResources(() => this.#slots.values());
  readonly #listeners = new Set<(server: string) => void>();
  /** Instances started before any call (the listing's), by slot key, until their slot is made. */
  readonly #adopted = new Map<string, ServerInstance>();
  #isClosed = false;

  constructor(private readonly options: UpstreamServersOptions) {}

  /** The slot serving `spec`'s profile of its server, made on first use. */
  slotFor(spec: RunSpec & { readonly upstream: UpstreamRef }): ServerSlot {
    if (this.#isClosed) throw new Error('the upstream servers are closed');
    const key = `${spec.upstream.server}:${spec.upstream.profile}`;
    let slot = this.#slots.get(key);
    if (!slot) {
      slot = new ServerSlot(
        {
          run: { ...spec, name: key },
          startupTimeoutMs: spec.upstream.startupTimeoutMs,
          maxMessageBytes: this.options.maxMessageBytes ?? DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES,
        },
        this.options,
        this.#adopted.get(key),
      );
      this.#adopted.delete(key);
      const server = spec.upstream.server;
      const created = slot;
      slot.onToolsChanged = () => void this.#toolsChanged(server, created, spec.upstream.startupTimeoutMs);
      this.#slots.set(key, slot);
    }
    return slot;
  }

  /** Takes a running instance (the one that listed the server) to serve `profile`'s first calls. */
  adopt(server: string, profile: UpstreamRef['profile'], instance: ServerInstance): void {
    const key = `${server}:${profile}`;
    if (this.#isClosed || this.#slots.has(key) || this.#adopted.has(key)) {
      instance.kill();
      return;
    }
    this.#adopted.set(key, instance);
  }

  /** Remembers that `spec`'s server returned a resource link to `uri`, shown to the caller as `shownUri`. */
  rememberLink(spec: RunSpec & { readonly upstream: UpstreamRef }, shownUri: string, uri: string): void {
    this.#resources.rememberLink(this.slotFor(spec), shownUri, uri);
  }

  /** Remembers that `spec`'s tool names the MCP Apps resource `uri` (its `_meta.ui.resourceUri`). */
  rememberUiResource(spec: RunSpec & { readonly upstream: UpstreamRef }, uri: string): void {
    this.#resources.rememberUiResource(this.slotFor(spec), uri);
  }

  /**
   * resources/read of a URI an upstream server returned as a resource link, or of an MCP Apps
   * `ui://` resource, forwarded to that server only; undefined for any other URI (never
   * forwarded anywhere).
   */
  readResource(uri: string): Promise<UpstreamResource | undefined> {
    return this.#resources.read(uri);
  }

  // Lists the server again; tells the listeners only when the listing really differs from the loaded one.
  async #toolsChanged(server: string, slot: ServerSlot, timeoutMs: number): Promise<void> {
    const known = this.options.fingerprints?.get(server);
    const fingerprint = this.options.fingerprint;
    if (known !== undefined && fingerprint !== undefined) {
      const acquired = await slot.acquire();
      if (!acquired.ok) return;
      const listed = await acquired.instance.listTools(timeoutMs);
      if (listed.ok && fingerprint(listed.tools) === known) {
        this.options.logger.debug({ server }, 'upstream tools/list_changed without a change; ignored');
        return;
      }
    }
    for (const listener of this.#listeners) listener(server);
  }

  /** Subscribes to upstream `tools/list_changed`; returns the unsubscribe. */
  onToolsChanged(listener: (server: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get logger(): Logger {
    return this.options.logger;
  }

  /** Kills every instance; idempotent. */
  async close(): Promise<void> {
    this.#isClosed = true;
    const slots = [...this.#slots.values()];
    const adopted = [...this.#adopted.values()];
    this.#slots.clear();
    this.#adopted.clear();
    await Promise.allSettled([...slots.map((slot) => slot.close()), ...adopted.map((instance) => instance.killAndWait())]);
  }
}
