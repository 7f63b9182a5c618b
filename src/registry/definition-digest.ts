// The digest of a tool's definition (SPEC section 4.2): SHA-256, hex, of the
// RFC 8785 canonical JSON of {name, description, inputSchema, outputSchema,
// annotations, classEntry}. The lock pins it, approvals bind to it, and the
// journal records it; all three use this one function so they agree.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../config/canonical-json.js';

export { canonicalJson };

/** What a tool's definition is: what a model reads and what the host enforces for it. */
export interface ToolDefinition {
  /** The listed name. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
  /** null when the tool declares none. */
  readonly outputSchema: unknown;
  /** The annotations the tool carries (a server's own hints; for a manifest tool, those derived from its class). */
  readonly annotations: unknown;
  /** The class entry that applies (a manifest's class keys; a server tool's `tools:` entry). */
  readonly classEntry: unknown;
}

/** SHA-256 hex of the canonical JSON (RFC 8785) of the definition. */
export function definitionDigest(definition: ToolDefinition): string {
  const { name, description, inputSchema, outputSchema, annotations, classEntry } = definition;
  return createHash('sha256').update(canonicalJson({ name, description, inputSchema, outputSchema, annotations, classEntry }), 'utf8').digest('hex');
}
