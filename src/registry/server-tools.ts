// An upstream server's listing → tool manifests (SPEC section 2.1). Each
// upstream tool takes its class from the server manifest's `tools:` entries
// (never from the server's annotations, which are kept as hints only), gets
// the listed name <server>__<tool>, and its schemas pass the upstream checks.
// Tools that are hidden, do not fit the name rules, collide or carry an unsafe
// schema are excluded, each with its reason for `validate` and `list`. Pure.
import { createHash } from 'node:crypto';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ToolSchemaCompiler } from './ajv.js';
import type { Manifest, ManifestRoot } from './manifest.js';
import { normalizeEffects } from './manifest-effects.js';
import { checkUpstreamSchema } from './schema-checks.js';
import { listedToolName, matchToolEntry, type ServerManifest, type ServerToolEntry } from './server-manifest.js';
import { isRecord } from '../config/guards.js';

/** What a server listed, or why it could not be read. */
export type ServerListing =
  | { readonly ok: true; readonly tools: readonly ListedUpstreamTool[]; readonly truncated: boolean }
  | { readonly ok: false; readonly reason: string; readonly stderrLines?: readonly string[] };

export interface ListedUpstreamTool {
  readonly name: string;
  readonly title?: unknown;
  readonly description?: unknown;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
  /** MCP Apps and other extensions (`ui.resourceUri`): passed on bounded, without the host's own keys. */
  readonly _meta?: unknown;
}

/** One upstream tool as validate and list report it. */
interface ServerToolReport {
  readonly upstream: string;
  /** The listed name; absent when the tool is excluded for its name. */
  readonly listed?: string;
  /** The `tools:` key that classified it. */
  readonly entry?: string;
  readonly sideEffect?: string;
  /** Why the tool is not offered; absent when it is. */
  readonly excluded?: string;
  /** Not offered because its tools: entry says hidden: true (the one exclusion validate accepts). */
  readonly isHidden?: boolean;
  /** Where its tools: entry is written (the tools: key when no entry matched), for file:line:col. */
  readonly line: number;
  readonly col: number;
  /** The server's own annotations: unverified. */
  readonly hints?: Readonly<Record<string, unknown>>;
}

export interface ServerReport {
  readonly server: string;
  readonly displayFile: string;
  /** Set when the server could not be started or listed. */
  readonly unavailable?: string;
  /** The last lines of its stderr when it could not (redacted, bounded). */
  readonly stderrLines?: readonly string[];
  /** The server conflicts with the policy (`unavailable` names the rule): an exclusion, not a start failure. */
  readonly isExcludedByPolicy?: boolean;
  readonly truncated: boolean;
  readonly tools: readonly ServerToolReport[];
  /** What the listing was (fingerprintListing), to tell a real tools/list_changed from a repeat. */
  readonly fingerprint?: string;
}

interface ServerTools {
  readonly manifests: readonly Manifest[];
  readonly report: ServerReport;
}

/** Longest upstream description kept. */
const MAX_UPSTREAM_DESCRIPTION_CHARS = 4096;
/** Longest upstream title kept. */
const MAX_UPSTREAM_TITLE_CHARS = 200;

interface BuildServerToolsOptions {
  /**
   * Values of the host's secrets (secretValuesOf): a tool whose name holds one is not
   * offered, since a name cannot be redacted without breaking calls to it.
   */
  readonly secretValues?: readonly string[];
}

/** Builds the manifests of one server's offered tools and the report of all of them. */
export function buildServerTools(server: ServerManifest, listing: ServerListing, compiler: ToolSchemaCompiler, options: BuildServerToolsOptions = {}): ServerTools {
  if (!listing.ok) {
    const stderrLines = listing.stderrLines && listing.stderrLines.length > 0 ? { stderrLines: listing.stderrLines } : {};
    return { manifests: [], report: { server: server.name, displayFile: server.displayFile, unavailable: listing.reason, ...stderrLines, truncated: false, tools: [] } };
  }
  const byListedName = new Map<string, string[]>();
  for (const tool of listing.tools) {
    const listed = listedToolName(server.name, tool.name);
    if (listed !== undefined) byListedName.set(listed, [...(byListedName.get(listed) ?? []), tool.name]);
  }
  const readOnlyPaths = nodeModulesAbove(server.dir);
  const manifests: Manifest[] = [];
  const reports: ServerToolReport[] = [];
  const secretInName = secretNameMatcher(options.secretValues ?? []);
  for (const tool of listing.tools) {
    const entry = matchToolEntry(server.tools, tool.name);
    const hints = isRecord(tool.annotations) ? boundedHints(tool.annotations) : undefined;
    const hasSecretName = secretInName(tool.name);
    const at = server.source.keyPositionOf(entry ? ['tools', entry.pattern] : ['tools']);
    const base = {
      upstream: hasSecretName ? REDACTED_NAME : tool.name.slice(0, 200),
      line: at.line,
      col: at.col,
      ...(entry ? { entry: entry.pattern } : {}),
      ...(entry?.sideEffect ? { sideEffect: entry.sideEffect } : {}),
      ...(hints ? { hints } : {}),
    };
    const listed = listedToolName(server.name, tool.name);
    if (entry?.hidden) {
      reports.push({ ...base, excluded: 'hidden by its tools: entry', isHidden: true });
      continue;
    }
    if (hasSecretName) {
      reports.push({ ...base, excluded: "its name holds the value of one of the host's secrets (env.secrets)" });
      continue;
    }
    if (listed === undefined) {
      reports.push({ ...base, excluded: `the name does not fit ^[a-z][a-z0-9_]{0,63}$ as ${server.name}__<name>` });
      continue;
    }
    const clashing = byListedName.get(listed) ?? [];
    if (clashing.length > 1) {
      reports.push({ ...base, listed, excluded: `the listed name ${listed} collides with ${clashing.filter((name) => name !== tool.name).join(', ') || 'another tool'}` });
      continue;
    }
    const input = checkUpstreamSchema(tool.inputSchema ?? { type: 'object' }, 'input', compiler);
    if (!input.ok) {
      reports.push({ ...base, listed, excluded: input.reason });
      continue;
    }
    const output = tool.outputSchema === undefined ? undefined : checkUpstreamSchema(tool.outputSchema, 'output', compiler);
    if (output && !output.ok) {
      reports.push({ ...base, listed, excluded: output.reason });
      continue;
    }
    const sideEffect = entry?.sideEffect;
    const readOnly = sideEffect === 'read_only';
    const instances = server.instances ?? 'split';
    // The class is enforced by the sandbox: with split, a read_only tool's instance sees every root
    // read-only. With one, every tool shares the instance with the declared access.
    const roots: ManifestRoot[] = server.roots.map((root) => (readOnly && instances === 'split' ? { ...root, access: 'read' as const } : root));
    const title = typeof tool.title === 'string' && tool.title !== '' ? tool.title.slice(0, MAX_UPSTREAM_TITLE_CHARS) : undefined;
    const meta = upstreamMetaOf(tool._meta);
    const manifest: Manifest = {
      name: listed,
      description:
        typeof tool.description === 'string' && tool.description !== ''
          ? tool.description.slice(0, MAX_UPSTREAM_DESCRIPTION_CHARS)
          : `${tool.name} (from the ${server.name} server)`,
      ...(sideEffect !== undefined ? { sideEffect } : {}),
      idempotent: entry?.idempotent ?? readOnly,
      concurrencySafe: (entry?.concurrencySafe ?? false) && readOnly,
      timeoutMs: Math.min(entry?.timeoutMs ?? server.timeoutMs, server.timeoutMs),
      sandbox: {
        mode: 'process',
        ...(server.memoryMb !== undefined ? { memoryMb: server.memoryMb } : {}),
        command: server.command,
        stdout: 'json',
        isolation: server.isolation,
        persistent: true,
        poolSize: 1,
        env: server.env,
        envLiterals: server.envLiterals,
      },
      roots,
      networkAllow: server.networkAllow,
      ...(server.maxResultBytes !== undefined ? { maxResultBytes: server.maxResultBytes } : {}),
      format: 'json',
      approval: entry?.approval ?? 'auto',
      terminal: entry?.terminal ?? false,
      ...effectsOf(entry, tool.inputSchema),
      input: tool.inputSchema as Record<string, unknown>,
      ...(output ? { output: tool.outputSchema as Record<string, unknown> } : {}),
      validateInput: input.validate,
      ...(output ? { validateOutput: output.validate } : {}),
      file: server.file,
      displayFile: server.displayFile,
      dir: server.dir,
      source: server.source,
      upstream: {
        server: server.name,
        tool: tool.name,
        ...(entry ? { entry: entry.pattern } : {}),
        ...(hints ? { hints } : {}),
        startupTimeoutMs: server.startupTimeoutMs,
        readOnlyPaths,
        hasWritableRoot: server.roots.some((root) => root.access === 'read_write'),
        instances,
        ...(title !== undefined ? { title } : {}),
        ...(meta !== undefined ? { meta } : {}),
      },
    };
    manifests.push(Object.freeze(manifest));
    reports.push({ ...base, listed, ...(sideEffect === undefined ? {} : {}) });
  }
  return {
    manifests,
    report: { server: server.name, displayFile: server.displayFile, truncated: listing.truncated, tools: reports, fingerprint: fingerprintListing(listing.tools) },
  };
}

/** A digest of a listing (names, descriptions, schemas, annotations; order ignored). */
function fingerprintListing(tools: readonly ListedUpstreamTool[]): string {
  // A listing is digested where it arrives and again where it is loaded: once is enough.
  let digest = FINGERPRINTS.get(tools);
  if (digest === undefined) {
    digest = digestListing(tools);
    FINGERPRINTS.set(tools, digest);
  }
  return digest;
}

const FINGERPRINTS = new WeakMap<readonly ListedUpstreamTool[], string>();

/**
 * fingerprintListing without holding the event loop: a few tools per turn (a listing of
 * megabytes is not stringified and hashed in one go). Same digest, remembered the same way.
 */
export async function fingerprintListingSoon(tools: readonly ListedUpstreamTool[]): Promise<string> {
  const known = FINGERPRINTS.get(tools);
  if (known !== undefined) return known;
  const digests: string[] = [];
  for (let at = 0; at < tools.length; at += TOOLS_PER_TURN) {
    for (const tool of tools.slice(at, at + TOOLS_PER_TURN)) digests.push(digestTool(tool));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const digest = combineDigests(digests);
  FINGERPRINTS.set(tools, digest);
  return digest;
}

const TOOLS_PER_TURN = 8;

// Each tool digested on its own, then the sorted digests together: order does not matter.
function digestListing(tools: readonly ListedUpstreamTool[]): string {
  return combineDigests(tools.map(digestTool));
}

function digestTool(tool: ListedUpstreamTool): string {
  return createHash('sha256')
    .update(JSON.stringify([tool.name, tool.title, tool.description, tool.inputSchema, tool.outputSchema, tool.annotations, tool._meta]))
    .digest('hex');
}

function combineDigests(digests: readonly string[]): string {
  return createHash('sha256')
    .update([...digests].sort().join('\n'))
    .digest('hex');
}

/** Shown in reports instead of a tool name that holds a secret. */
export const REDACTED_NAME = '[redacted name]';
/** Bytes of a tool's `_meta` (as JSON) passed on; a larger one is dropped whole. */
export const MAX_UPSTREAM_META_BYTES = 16 * 1024;
/** Nesting of a tool's `_meta` passed on; a deeper one is dropped whole. */
const MAX_UPSTREAM_META_DEPTH = 16;
/** `_meta` keys under this prefix are the host's own (`toolhost/terminal`): a server never sets them. */
const HOST_META_PREFIX = 'toolhost/';

/**
 * A tool's `_meta` as the server gave it (MCP Apps: `ui.resourceUri`), without the
 * host's own keys, or undefined when there is none or it is too large or too deep.
 * Redaction happens where it is listed (the supervisor holds the redactor).
 */
function upstreamMetaOf(meta: unknown): Readonly<Record<string, unknown>> | undefined {
  if (!isRecord(meta)) return undefined;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta)) {
    if (key.startsWith(HOST_META_PREFIX) || key === '__proto__') continue;
    kept[key] = value;
  }
  if (Object.keys(kept).length === 0 || depthOf(kept, 0) > MAX_UPSTREAM_META_DEPTH) return undefined;
  const json = JSON.stringify(kept);
  if (Buffer.byteLength(json) > MAX_UPSTREAM_META_BYTES) return undefined;
  // A copy of plain JSON, frozen with the manifest.
  return JSON.parse(json) as Record<string, unknown>;
}

function depthOf(value: unknown, depth: number): number {
  if (typeof value !== 'object' || value === null || depth > MAX_UPSTREAM_META_DEPTH) return depth;
  let max = depth + 1;
  for (const child of Object.values(value)) max = Math.max(max, depthOf(child, depth + 1));
  return max;
}

// True when a tool name holds a secret value, as written or as listed (lowered, other characters as _).
function secretNameMatcher(secretValues: readonly string[]): (name: string) => boolean {
  const secrets = secretValues.filter((value) => value.length > 0);
  if (secrets.length === 0) return () => false;
  const listedForm = (text: string): string => text.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const listedSecrets = secrets.map(listedForm);
  return (name) => secrets.some((secret) => name.includes(secret)) || listedSecrets.some((secret) => listedForm(name).includes(secret));
}

// The standard hint keys only, as booleans or a short title: the rest of a server's annotations is not shown.
function boundedHints(annotations: Record<string, unknown>): Record<string, unknown> | undefined {
  const hints: Record<string, unknown> = {};
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) if (typeof annotations[key] === 'boolean') hints[key] = annotations[key];
  if (typeof annotations['title'] === 'string') hints['title'] = annotations['title'].slice(0, 120);
  return Object.keys(hints).length > 0 ? hints : undefined;
}

/** The node_modules folders Node would search from `dir` (real paths), nearest first. */
// Node resolves a bare import from the manifest folder through every node_modules above
// it: those folders (and only they, not their parents) are shown read-only to the server.
export function nodeModulesAbove(dir: string): string[] {
  const found: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, 'node_modules');
    try {
      if (existsSync(candidate) && statSync(candidate).isDirectory()) found.push(realpathSync(candidate));
    } catch {
      // unreadable: not shown
    }
    if (dirname(at) === at) break;
  }
  return found;
}

/** The name under which a server's start-up probe is assessed by the policy (never listed). */
function probeNameOf(server: string): string {
  return `${server}__`;
}

/**
 * A stand-in manifest for starting the server to read its listing: read_only, so
 * the probe instance sees every root read-only and no tool code runs with write
 * access before the tools are classified.
 */
export function probeManifestOf(server: ServerManifest, compiler: ToolSchemaCompiler): Manifest {
  const probe = buildServerTools({ ...server, tools: [] }, { ok: true, tools: [{ name: 'probe', inputSchema: { type: 'object' } }], truncated: false }, compiler).manifests[0];
  if (!probe) throw new Error(`internal: no probe manifest for server ${server.name}`);
  const upstream = probe.upstream === undefined ? undefined : { ...probe.upstream, probe: true as const };
  return Object.freeze({
    ...probe,
    name: probeNameOf(server.name),
    sideEffect: 'read_only',
    roots: server.roots.map((root) => ({ ...root, access: 'read' as const })),
    ...(upstream === undefined ? {} : { upstream }),
  });
}

// An entry's effects for one listed tool: the content argument is inferred from this tool's schema.
function effectsOf(entry: ServerToolEntry | undefined, inputSchema: unknown): Pick<Manifest, 'effects'> {
  if (entry?.effects === undefined) return {};
  const schema = typeof inputSchema === 'object' && inputSchema !== null ? (inputSchema as Record<string, unknown>) : {};
  const effects = normalizeEffects(entry.effects, schema);
  return effects === undefined ? {} : { effects };
}
