// A tool's definition as the lock pins it (SPEC section 4.2), from its
// manifest: what the model reads (name, description, schemas, annotations)
// and the class entry the host enforces for it. A server tool's annotations
// are the server's own (a server that changes them changes its definition); a
// manifest tool's are those the host derives from its class and network.
import { definitionDigest, type ToolDefinition } from './definition-digest.js';
import type { Manifest } from './manifest.js';

/** The definition of a loaded tool. */
export function definitionOf(manifest: Manifest): ToolDefinition {
  const sideEffect = manifest.sideEffect ?? null;
  return {
    name: manifest.name,
    description: manifest.description,
    inputSchema: manifest.input,
    outputSchema: manifest.output ?? null,
    annotations: manifest.upstream
      ? (manifest.upstream.hints ?? null)
      : {
          readOnlyHint: sideEffect === 'read_only',
          destructiveHint: sideEffect === 'destructive' || sideEffect === null,
          idempotentHint: manifest.idempotent,
          openWorldHint: manifest.networkAllow.length > 0 || sideEffect === 'remote_mutation',
        },
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
