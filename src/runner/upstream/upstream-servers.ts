// The upstream servers of one host (STYLE: per-host state, built by host.ts):
// one ServerSlot per server profile, shared by every tool of that server and
// profile, all killed when the host closes.
import type { Logger } from '../../log.js';
import type { RunSpec, UpstreamRef } from '../types.js';
import type { ServerInstance, UpstreamTool } from './server-instance.js';
import { ServerSlot, type SlotDeps } from './server-slot.js';

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
  /** Told every listing read after a server's tools/list_changed (pinned definitions are checked against it). */
  readonly onListing?: (server: string, tools: readonly UpstreamTool[]) => void;
}

/** At most this many resource-link URIs are remembered (oldest forgotten first). */
export const MAX_REMEMBERED_LINKS = 10_000;
/** Largest resource a server may return through resources/read, in bytes of its content. */
export const MAX_UPSTREAM_RESOURCE_BYTES = 16 * 1024 * 1024;

export class UpstreamServers {
  readonly #slots = new Map<string, ServerSlot>();
  /** Resource-link URI → the slot whose server returned it: only those are forwarded. */
  readonly #links = new Map<string, ServerSlot>();
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

  /** Remembers that `spec`'s server returned a resource link to `uri`. */
  rememberLink(spec: RunSpec & { readonly upstream: UpstreamRef }, uri: string): void {
    this.#links.delete(uri);
    this.#links.set(uri, this.slotFor(spec));
    if (this.#links.size > MAX_REMEMBERED_LINKS) this.#links.delete(this.#links.keys().next().value as string);
  }

  /**
   * resources/read of a URI an upstream server returned as a resource link, forwarded to
   * that server only; undefined for any other URI (never forwarded anywhere).
   */
  async readResource(uri: string): Promise<{ mimeType: string; bytes: Uint8Array } | undefined> {
    const slot = this.#links.get(uri);
    if (!slot) return undefined;
    const acquired = await slot.acquire();
    if (!acquired.ok) return undefined;
    let result: unknown;
    try {
      result = await acquired.instance.client.request({ method: 'resources/read', params: { uri } }, { timeout: 30_000 });
    } catch {
      return undefined;
    }
    const first = (result as { contents?: unknown }).contents;
    const content = Array.isArray(first) ? (first[0] as Record<string, unknown> | undefined) : undefined;
    if (!content) return undefined;
    const mimeType = typeof content['mimeType'] === 'string' ? content['mimeType'].slice(0, 200) : 'application/octet-stream';
    const bytes = typeof content['text'] === 'string' ? Buffer.from(content['text'], 'utf8') : typeof content['blob'] === 'string' ? Buffer.from(content['blob'], 'base64') : undefined;
    if (!bytes || bytes.byteLength > MAX_UPSTREAM_RESOURCE_BYTES) return undefined;
    return { mimeType, bytes };
  }

  // Lists the server again; tells the listeners only when the listing really differs from the loaded one.
  async #toolsChanged(server: string, slot: ServerSlot, timeoutMs: number): Promise<void> {
    const known = this.options.fingerprints?.get(server);
    const fingerprint = this.options.fingerprint;
    if (known !== undefined && fingerprint !== undefined) {
      const acquired = await slot.acquire();
      if (!acquired.ok) return;
      const listed = await acquired.instance.listTools(timeoutMs);
      if (listed.ok) this.options.onListing?.(server, listed.tools);
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
