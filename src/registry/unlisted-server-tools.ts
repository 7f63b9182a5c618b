// The tools of an upstream server that could not be listed (it never started,
// or keeps failing): those its manifest names exactly (SPEC section 2.1). They
// are not offered in tools/list (their schemas are unknown), but a call to one
// is the server's failure, `sandbox_unavailable` with the reason, never
// `unknown_tool`. Their arguments are checked by the server itself if it starts.
import type { ToolSchemaCompiler } from './ajv.js';
import type { Manifest } from './manifest.js';
import { buildServerTools } from './server-tools.js';
import type { ServerManifest } from './server-manifest.js';

/** Manifests of the tools `server` names exactly (not hidden), for a server without a listing. */
export function unlistedServerTools(server: ServerManifest, compiler: ToolSchemaCompiler): readonly Manifest[] {
  const named = server.tools.filter((entry) => !entry.hidden && !entry.pattern.includes('*'));
  if (named.length === 0) return [];
  const listing = { ok: true as const, tools: named.map((entry) => ({ name: entry.pattern, inputSchema: { type: 'object' } })), truncated: false };
  return buildServerTools(server, listing, compiler).manifests;
}
