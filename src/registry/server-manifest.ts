// The ServerManifest type: one `kind: Server` file (SPEC section 2.1) after
// schema validation and normalization, and the matching of upstream tool
// names to its `tools:` entries. Frozen once loaded.
import type { YamlSource } from '../config/yaml-source.js';
import type { ManifestRoot, SideEffect } from './manifest.js';

/** How the host offers the upstream tools one `tools:` key matches. */
export interface ServerToolEntry {
  /** The key as written: an exact name or a glob with `*`. */
  readonly pattern: string;
  readonly sideEffect?: SideEffect;
  readonly idempotent?: boolean;
  readonly concurrencySafe?: boolean;
  readonly timeoutMs?: number;
  readonly approval?: 'auto' | 'always';
  /** Accepted and carried; its semantics belong to SPEC section 5.2. */
  readonly terminal?: boolean;
  /**
   * What the matched tools write (SPEC section 2 `effects`), as declared: the content argument
   * is inferred per tool from its listed schema (server-tools.ts), since the schema comes at run time.
   */
  readonly effects?: { readonly writes: readonly string[]; readonly content?: string | null };
  readonly hidden: boolean;
}

export interface ServerManifest {
  readonly kind: 'Server';
  readonly name: string;
  readonly description: string;
  /** argv; ./ elements resolved inside the manifest folder, ${WORKSPACE} substituted. */
  readonly command: readonly string[];
  readonly isolation: 'none' | 'namespace';
  /** Undefined: the policy's maximum applies. */
  readonly memoryMb?: number;
  /** Host names passed through (list form and null map values). */
  readonly env: readonly string[];
  /** Values set as written (${WORKSPACE} expanded), by name. */
  readonly envLiterals: Readonly<Record<string, string>>;
  readonly startupTimeoutMs: number;
  readonly roots: readonly ManifestRoot[];
  readonly networkAllow: readonly string[];
  readonly timeoutMs: number;
  /**
   * split: read_only tools get an instance of their own whose roots are all read-only;
   * one: a single instance serves every tool (the read_only class is then declared, not
   * enforced). Undefined: the manifest has tools of one kind only, which run once.
   */
  readonly instances?: ServerInstances;
  readonly maxResultBytes?: number;
  readonly tools: readonly ServerToolEntry[];
  readonly file: string;
  readonly displayFile: string;
  readonly dir: string;
  readonly source: YamlSource;
}

export type ServerInstances = 'split' | 'one';

/** Default for `sandbox.startupTimeoutMs`: start, initialize and tools/list. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 20_000;

/**
 * The entry for upstream tool `name`: an exact key beats any glob, a longer glob
 * a shorter one (equal lengths: the one written first). Undefined when none matches.
 */
export function matchToolEntry(entries: readonly ServerToolEntry[], name: string): ServerToolEntry | undefined {
  const exact = entries.find((entry) => entry.pattern === name);
  if (exact) return exact;
  let best: ServerToolEntry | undefined;
  for (const entry of entries) {
    if (!entry.pattern.includes('*') || !globMatches(entry.pattern, name)) continue;
    if (best === undefined || entry.pattern.length > best.pattern.length) best = entry;
  }
  return best;
}

// `*` matches any run of characters (slashes too: tool names are not paths).
function globMatches(pattern: string, name: string): boolean {
  const parts = pattern.split('*');
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (!name.startsWith(first) || name.length < first.length + last.length || !name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = name.indexOf(middle, at);
    if (found === -1 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** The listed name of upstream tool `tool` of server `server`, or undefined when it does not fit the name rules. */
export function listedToolName(server: string, tool: string): string | undefined {
  const lowered = tool.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const name = `${server}__${lowered}`;
  return /^[a-z][a-z0-9_]{0,63}$/.test(name) && lowered.length > 0 ? name : undefined;
}
