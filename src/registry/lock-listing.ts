// A server's listing as the lock pinned it (SPEC section 4.2: with a lock,
// `list`, `validate` and the first tools/list may answer from the pins before
// the server has started; the server's own listing is checked against them
// when it starts). Fed to buildServerTools in place of a listing read from the
// running server, it yields the same tools with the same digests.
import type { ToolLock } from './lock-file.js';
import type { ListedUpstreamTool, ServerListing } from './server-tools.js';

/** The pinned listing of `server`, or undefined when the lock pins none of its tools. */
export function listingFromLock(lock: ToolLock, server: string): ServerListing | undefined {
  const tools: ListedUpstreamTool[] = [];
  for (const entry of lock.entries.values()) {
    if (entry.server !== server || entry.upstreamName === undefined) continue;
    const { description, inputSchema, outputSchema, annotations } = entry.definition;
    tools.push({
      name: entry.upstreamName,
      description,
      inputSchema,
      ...(outputSchema !== null ? { outputSchema } : {}),
      ...(annotations !== null ? { annotations } : {}),
    });
  }
  return tools.length === 0 ? undefined : { ok: true, tools, truncated: false };
}

/** The pinned listing of each of `servers` that the lock pins tools of. */
export function listingsFromLock(lock: ToolLock, servers: Iterable<string>): Map<string, ServerListing> {
  const listings = new Map<string, ServerListing>();
  for (const server of servers) {
    const listing = listingFromLock(lock, server);
    if (listing !== undefined) listings.set(server, listing);
  }
  return listings;
}
