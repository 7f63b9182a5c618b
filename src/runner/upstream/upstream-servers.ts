// The upstream servers of one host (STYLE: per-host state, built by host.ts):
// one ServerSlot per server profile, shared by every tool of that server and
// profile, all killed when the host closes.
import type { Logger } from '../../log.js';
import type { RunSpec, UpstreamRef } from '../types.js';
import type { ListResult, ServerInstance, UpstreamTool } from './server-instance.js';
import { ServerSlot, type SlotDeps, type StartFailure } from './server-slot.js';
import { UpstreamResources, type UpstreamResource } from './upstream-resources.js';

/** Told that a server's tools changed, with what it lists now. */
type ToolsChangedListener = (server: string, listing: ListResult) => void;

/**
 * Largest JSON-RPC message an upstream server may send while it is listed (tools/list needs
 * no more). Once it serves calls its bound is the tool's output cap (RunSpec.floodCapBytes,
 * 128 MiB): a larger result is spilled as an artifact or is output_limit (SPEC section 5
 * step 9), and only a flood past the cap kills the server.
 */
export const DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES = 16 * 1024 * 1024;

interface UpstreamServersOptions extends SlotDeps {
  readonly maxMessageBytes?: number;
  /**
   * Digest of each server's listing as loaded (by server name). A tools/list_changed whose
   * new listing has the same digest is not a change (servers send one after start-up);
   * only a real change reaches the listeners. Absent: every notification does.
   */
  readonly fingerprints?: ReadonlyMap<string, string>;
  /** The digest function (registry/server-tools.ts fingerprintListingSoon: a listing of megabytes is digested in slices). */
  readonly fingerprint?: (tools: readonly UpstreamTool[]) => string | Promise<string>;
  /** Told every listing read after a server's tools/list_changed (pinned definitions are checked against it). */
  readonly onListing?: (server: string, tools: readonly UpstreamTool[]) => void;
}

export class UpstreamServers {
  readonly #slots = new Map<string, ServerSlot>();
  /** Links and MCP Apps resources: which server answers a resources/read (only those are forwarded). */
  readonly #resources = new UpstreamResources(() => this.#slots.values());
  readonly #listeners = new Set<ToolsChangedListener>();
  /** Instances started before any call (the listing's), by slot key, until their slot is made. */
  readonly #adopted = new Map<string, ServerInstance>();
  /** Servers whose first start (the listing's) failed: their slots begin in backoff. */
  readonly #failures = new Map<string, StartFailure>();
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
          maxMessageBytes: this.options.maxMessageBytes ?? spec.floodCapBytes,
        },
        this.options,
        this.#adopted.get(key),
        this.#failures.get(spec.upstream.server),
      );
      this.#adopted.delete(key);
      const server = spec.upstream.server;
      const created = slot;
      slot.onToolsChanged = () => void this.#toolsChanged(server, created, spec.upstream.startupTimeoutMs);
      // A server that could not be listed and starts later is listed then.
      slot.onRecovered = () => void this.#toolsChanged(server, created, spec.upstream.startupTimeoutMs);
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

  /**
   * Records that `server` failed to start when it was listed: its tools' calls fail
   * `sandbox_unavailable` with this reason and stderr tail until the backoff lets a call
   * start it again (not at once on every call).
   */
  noteStartFailure(server: string, failure: StartFailure): void {
    this.#failures.set(server, failure);
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

  // Lists the server again; tells the listeners (with the new listing) only when it really
  // differs from the loaded one.
  async #toolsChanged(server: string, slot: ServerSlot, timeoutMs: number): Promise<void> {
    const known = this.options.fingerprints?.get(server);
    const fingerprint = this.options.fingerprint;
    const acquired = await slot.acquire();
    if (!acquired.ok) return;
    const listed = await acquired.instance.listTools(timeoutMs);
    if (listed.ok) this.options.onListing?.(server, listed.tools);
    if (listed.ok && known !== undefined && fingerprint !== undefined && (await fingerprint(listed.tools)) === known) {
      this.options.logger.debug({ server }, 'upstream tools/list_changed without a change; ignored');
      return;
    }
    for (const listener of this.#listeners) listener(server, listed);
  }

  /** Subscribes to upstream `tools/list_changed` (with the server's new listing); returns the unsubscribe. */
  onToolsChanged(listener: ToolsChangedListener): () => void {
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
