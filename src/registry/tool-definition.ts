// A tool's definition as the lock pins it (SPEC section 4.2), from its
// manifest: what the model reads (name, description, schemas, annotations)
// and the class entry the host enforces for it. A server tool's annotations
// are the server's own (a server that changes them changes its definition); a
// manifest tool's are those the host derives from its class and network.
import { definitionDigest, type ToolDefinition } from './definition-digest.js';
import type { Manifest } from './manifest.js';

/** MCP tool annotations, derived from the enforced class and network (SPEC section 6), never from the tool's own hints. */
interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/** The annotations of a tool whose egress allowlist in force is `networkAllow`. */
export function toolAnnotations(manifest: Manifest, networkAllow: readonly string[]): ToolAnnotations {
  const sideEffect = manifest.sideEffect;
  return {
    readOnlyHint: sideEffect === 'read_only',
    // An unclassified tool (allowed only by a non-strict policy) is assumed to be the worst.
    destructiveHint: sideEffect === 'destructive' || sideEffect === undefined,
    idempotentHint: manifest.idempotent,
    openWorldHint: networkAllow.length > 0 || sideEffect === 'remote_mutation',
  };
}

/** The definition of a loaded tool. */
export function definitionOf(manifest: Manifest): ToolDefinition {
  const sideEffect = manifest.sideEffect ?? null;
  return {
    name: manifest.name,
    description: manifest.description,
    inputSchema: manifest.input,
    outputSchema: manifest.output ?? null,
    annotations: manifest.upstream ? (manifest.upstream.hints ?? null) : toolAnnotations(manifest, manifest.networkAllow),
    classEntry: {
      ...(manifest.upstream?.entry !== undefined ? { entry: manifest.upstream.entry } : {}),
      sideEffect,
      idempotent: manifest.idempotent,
      concurrencySafe: manifest.concurrencySafe,
      approval: manifest.approval,
      terminal: manifest.terminal,
    },
  };
}

/** The digest of a loaded tool's definition. */
export function manifestDigest(manifest: Manifest): string {
  return definitionDigest(definitionOf(manifest));
}
