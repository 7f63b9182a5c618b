// Which upstream server answers a resources/read of the host (SPEC section
// 2.1): a resource link a server returned (by the URI the caller was shown,
// which may be an opaque stand-in for the server's own), and MCP Apps `ui://`
// resources (named by a tool's `_meta.ui.resourceUri`, or listed by a running
// server). Any other URI is never forwarded anywhere. What comes back is the
// server's: bounded here in bytes, redacted by the host (supervisor).
import type { ServerSlot } from './server-slot.js';

/** At most this many resource-link URIs are remembered (oldest forgotten first). */
const MAX_REMEMBERED_LINKS = 10_000;
/** At most this many `ui://` URIs named by tools are remembered. */
const MAX_UI_RESOURCES = 1_000;
/** Largest resource a server may return through resources/read, in bytes of its content. */
const MAX_UPSTREAM_RESOURCE_BYTES = 16 * 1024 * 1024;
/** How long a server has to answer resources/read or one page of resources/list. */
const UPSTREAM_RESOURCE_TIMEOUT_MS = 30_000;
/** Pages of a server's resources/list read while looking for a `ui://` URI. */
const MAX_LIST_PAGES = 8;

export interface UpstreamResource {
  readonly mimeType: string;
  readonly bytes: Uint8Array;
}

export class UpstreamResources {
  /** The URI the caller was shown → the slot whose server returned it and the server's own URI. */
  readonly #links = new Map<string, { readonly slot: ServerSlot; readonly uri: string }>();
  /** `ui://` URIs named by a tool's _meta → the slot of that tool's server. */
  readonly #ui = new Map<string, ServerSlot>();

  /** The slots whose running instances are asked for a `ui://` URI no tool named. */
  constructor(private readonly slots: () => Iterable<ServerSlot>) {}

  /** Remembers that `slot`'s server returned a link to `uri`, shown to the caller as `shownUri`. */
  rememberLink(slot: ServerSlot, shownUri: string, uri: string): void {
    this.#links.delete(shownUri);
    this.#links.set(shownUri, { slot, uri });
    if (this.#links.size > MAX_REMEMBERED_LINKS) this.#links.delete(this.#links.keys().next().value as string);
  }

  /** Remembers that a tool of `slot`'s server names the MCP Apps resource `uri`. */
  rememberUiResource(slot: ServerSlot, uri: string): void {
    if (!isUiUri(uri) || this.#ui.has(uri) || this.#ui.size >= MAX_UI_RESOURCES) return;
    this.#ui.set(uri, slot);
  }

  /** The resource, read from the one server it belongs to; undefined when no server may answer for it. */
  async read(uri: string): Promise<UpstreamResource | undefined> {
    const link = this.#links.get(uri);
    if (link) return readFrom(link.slot, link.uri);
    if (!isUiUri(uri)) return undefined;
    const named = this.#ui.get(uri);
    if (named) return readFrom(named, uri);
    const lister = await this.#findLister(uri);
    return lister ? readFrom(lister, uri) : undefined;
  }

  // A running server that lists `uri` (no server is started for a URI nobody named).
  async #findLister(uri: string): Promise<ServerSlot | undefined> {
    for (const slot of this.slots()) {
      const instance = slot.running;
      if (!instance) continue;
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        let result: { resources?: unknown; nextCursor?: unknown };
        try {
          result = (await instance.client.request(
            { method: 'resources/list', params: cursor !== undefined ? { cursor } : {} },
            { timeout: UPSTREAM_RESOURCE_TIMEOUT_MS },
          )) as never;
        } catch {
          break;
        }
        const listed = Array.isArray(result.resources) ? (result.resources as unknown[]) : [];
        if (listed.some((resource) => typeof resource === 'object' && resource !== null && (resource as { uri?: unknown }).uri === uri)) return slot;
        if (typeof result.nextCursor !== 'string' || result.nextCursor === '') break;
        cursor = result.nextCursor.slice(0, 1024);
      }
    }
    return undefined;
  }
}

/** True for an MCP Apps UI resource URI. */
function isUiUri(uri: string): boolean {
  return uri.startsWith('ui://') && uri.length <= 4096;
}

/** The `ui://` resource a tool's `_meta` names (`ui.resourceUri`, or the older flat `ui/resourceUri`), if any. */
export function uiResourceOf(meta: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!meta) return undefined;
  const ui = meta['ui'];
  const nested = typeof ui === 'object' && ui !== null ? (ui as Record<string, unknown>)['resourceUri'] : undefined;
  const uri = typeof nested === 'string' ? nested : meta['ui/resourceUri'];
  return typeof uri === 'string' && isUiUri(uri) ? uri : undefined;
}

async function readFrom(slot: ServerSlot, uri: string): Promise<UpstreamResource | undefined> {
  const acquired = await slot.acquire();
  if (!acquired.ok) return undefined;
  let result: unknown;
  try {
    result = await acquired.instance.client.request({ method: 'resources/read', params: { uri } }, { timeout: UPSTREAM_RESOURCE_TIMEOUT_MS });
  } catch {
    return undefined;
  }
  const contents = (result as { contents?: unknown }).contents;
  const content = Array.isArray(contents) ? (contents[0] as Record<string, unknown> | undefined) : undefined;
  if (typeof content !== 'object' || content === null) return undefined;
  const mimeType = typeof content['mimeType'] === 'string' ? content['mimeType'].slice(0, 200) : 'application/octet-stream';
  const bytes =
    typeof content['text'] === 'string' ? Buffer.from(content['text'], 'utf8') : typeof content['blob'] === 'string' ? Buffer.from(content['blob'], 'base64') : undefined;
  if (!bytes || bytes.byteLength > MAX_UPSTREAM_RESOURCE_BYTES) return undefined;
  return { mimeType, bytes };
}
