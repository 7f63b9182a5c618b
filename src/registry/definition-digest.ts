// A tool's definition and its digest (SPEC section 4.2): SHA-256 of the RFC
// 8785 canonical JSON of {name, description, inputSchema, outputSchema,
// annotations, classEntry}: what a model is shown of the tool and the class
// the host enforces. The journal records it with every call, so an auditor can
// tell which definition a call ran under; a lock pins the same digest.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../config/canonical-json.js';
import type { Manifest } from './manifest.js';

/** MCP tool annotations, derived from the enforced class and network (SPEC section 6), never from the tool's own hints. */
export interface ToolAnnotations {
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

/** What the digest covers. */
export function toolDefinition(manifest: Manifest, networkAllow: readonly string[]): Record<string, unknown> {
  return {
    name: manifest.name,
    description: manifest.description,
    inputSchema: manifest.input,
    outputSchema: manifest.output ?? null,
    annotations: toolAnnotations(manifest, networkAllow),
    // The class entry: what the host enforces and decides by, whoever declared it (a manifest or a server's `tools:` entry).
    classEntry: {
      sideEffect: manifest.sideEffect ?? null,
      idempotent: manifest.idempotent,
      concurrencySafe: manifest.concurrencySafe,
      approval: manifest.approval,
      terminal: manifest.terminal,
    },
  };
}

// Per manifest, per allowlist array (a tool's run spec keeps one array for its life): a lookup per call, no allocation.
const digests = new WeakMap<Manifest, WeakMap<readonly string[], string>>();
const NO_NETWORK: readonly string[] = Object.freeze([]);

/** The definition digest (sha256 hex), computed once per loaded manifest and allowlist. */
export function definitionDigestOf(manifest: Manifest, networkAllow: readonly string[] = NO_NETWORK): string {
  let byNetwork = digests.get(manifest);
  if (byNetwork === undefined) digests.set(manifest, (byNetwork = new WeakMap()));
  let digest = byNetwork.get(networkAllow);
  if (digest === undefined) {
    digest = createHash('sha256').update(canonicalJson(toolDefinition(manifest, networkAllow))).digest('hex');
    byNetwork.set(networkAllow, digest);
  }
  return digest;
}
