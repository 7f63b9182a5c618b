// The upstream servers of one host (STYLE: per-host state, built by host.ts):
// one ServerSlot per server profile, shared by every tool of that server and
// profile, all killed when the host closes.
import type { Logger } from '../../log.js';
import type { RunSpec, UpstreamRef } from '../types.js';
import { ServerSlot, type SlotDeps } from './server-slot.js';

/** Largest JSON-RPC message an upstream server may send: a result is bounded before it is parsed. */
export const DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface UpstreamServersOptions extends SlotDeps {
  readonly maxMessageBytes?: number;
}

export class UpstreamServers {
  readonly #slots = new Map<string, ServerSlot>();
  readonly #listeners = new Set<(server: string) => void>();
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
      );
      const server = spec.upstream.server;
      slot.onToolsChanged = () => {
        for (const listener of this.#listeners) listener(server);
      };
      this.#slots.set(key, slot);
    }
    return slot;
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
    this.#slots.clear();
    await Promise.allSettled(slots.map((slot) => slot.close()));
  }
}
