// toolhost.lock (SPEC section 4.2): beside the workspace's policies/, the
// pinned definition of every tool, by listed name: its digest and the
// definition itself (so `lock --check` can show what changed, and a server's
// tools can be listed from the pins before it starts). JSON, keys sorted, one
// key per line, so a change reviews as a readable diff. A lock that does not
// parse, or whose digest no longer matches its own definition (edited by
// hand), is a problem: the host does not start on it.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Problem } from '../config/problem.js';
import { canonicalJson, definitionDigest, type ToolDefinition } from './definition-digest.js';
import type { Manifest } from './manifest.js';
import { definitionOf } from './tool-definition.js';
import { isRecord } from '../config/guards.js';

/** The lock's file name, in the workspace beside policies/. */
export const LOCK_FILE_NAME = 'toolhost.lock';
/** The format version this build writes and reads. */
const LOCKFILE_VERSION = 1;
/** Largest lock read (bytes): a lock is text a person reviews. */
const MAX_LOCK_BYTES = 32 * 1024 * 1024;

/** One pinned tool. */
interface LockEntry {
  /** SHA-256 hex of the definition's canonical JSON (definition-digest.ts). */
  readonly digest: string;
  readonly definition: ToolDefinition;
  /** For a server's tool: the server and the tool's name as the server lists it. */
  readonly server?: string;
  readonly upstreamName?: string;
}

/** A lock as read from disk. */
export interface ToolLock {
  readonly path: string;
  /** For people: relative to the working directory when inside it. */
  readonly display: string;
  /** By listed name. */
  readonly entries: ReadonlyMap<string, LockEntry>;
}

type ReadLockResult = { readonly ok: true; readonly lock: ToolLock | null } | { readonly ok: false; readonly problems: readonly Problem[] };

/** Where the lock of a workspace lives. */
function lockPathOf(workspace: string): string {
  return join(workspace, LOCK_FILE_NAME);
}

/** Reads the lock of a workspace: null when there is none; problems when it cannot be trusted. */
export function readLock(workspace: string, display: string = LOCK_FILE_NAME): ReadLockResult {
  const path = lockPathOf(workspace);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return { ok: true, lock: null };
    return fail(display, 1, `cannot read the lock (${String((error as { code?: unknown }).code ?? error)})`);
  }
  if (Buffer.byteLength(text) > MAX_LOCK_BYTES) return fail(display, 1, `the lock is larger than ${MAX_LOCK_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return fail(display, 1, `the lock is not JSON (${error instanceof Error ? error.message : String(error)}); run toolhost lock to write it again`);
  }
  if (!isRecord(parsed) || parsed['lockfileVersion'] !== LOCKFILE_VERSION || !isRecord(parsed['tools'])) {
    return fail(display, 1, `the lock must be {"lockfileVersion": ${LOCKFILE_VERSION}, "tools": {...}}; run toolhost lock to write it again`);
  }
  const entries = new Map<string, LockEntry>();
  const problems: Problem[] = [];
  for (const [name, value] of Object.entries(parsed['tools'])) {
    const line = lineOfKey(text, name);
    const entry = readEntry(name, value);
    if (typeof entry === 'string') problems.push({ file: display, line, col: 1, reason: `${name}: ${entry}` });
    else entries.set(name, entry);
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, lock: { path, display, entries } };
}

/** The lock's text for these tools: every definition pinned, by listed name. */
export function renderLock(manifests: readonly Manifest[]): string {
  const tools: Record<string, unknown> = {};
  for (const manifest of [...manifests].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const definition = definitionOf(manifest);
    tools[manifest.name] = {
      digest: definitionDigest(definition),
      ...(manifest.upstream ? { server: manifest.upstream.server, upstreamName: manifest.upstream.tool } : {}),
      definition,
    };
  }
  // Canonical first (sorted keys), then indented: the same tools always write the same bytes.
  return `${JSON.stringify(JSON.parse(canonicalJson({ lockfileVersion: LOCKFILE_VERSION, tools })), null, 2)}\n`;
}

/** Writes the lock whole or not at all (a rename over the old one). */
export function writeLock(workspace: string, text: string): string {
  const path = lockPathOf(workspace);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o644 });
  renameSync(temporary, path);
  return path;
}

function readEntry(name: string, value: unknown): LockEntry | string {
  if (!isRecord(value) || typeof value['digest'] !== 'string' || !isRecord(value['definition'])) return 'an entry must hold digest and definition';
  const definition = value['definition'];
  if (definition['name'] !== name || typeof definition['description'] !== 'string') return 'the definition must name this tool and hold its description';
  const pinned: ToolDefinition = {
    name,
    description: definition['description'],
    inputSchema: definition['inputSchema'] ?? null,
    outputSchema: definition['outputSchema'] ?? null,
    annotations: definition['annotations'] ?? null,
    classEntry: definition['classEntry'] ?? null,
  };
  let digest: string;
  try {
    digest = definitionDigest(pinned);
  } catch {
    return 'the definition cannot be canonicalised';
  }
  // A pin whose digest is not its definition's was edited by hand: neither can be trusted.
  if (digest !== value['digest']) return 'the digest does not match the pinned definition (edited by hand?); run toolhost lock to write it again';
  return {
    digest,
    definition: pinned,
    ...(typeof value['server'] === 'string' ? { server: value['server'] } : {}),
    ...(typeof value['upstreamName'] === 'string' ? { upstreamName: value['upstreamName'] } : {}),
  };
}

function fail(file: string, line: number, reason: string): ReadLockResult {
  return { ok: false, problems: [{ file, line, col: 1, reason }] };
}

function lineOfKey(text: string, name: string): number {
  const index = text.indexOf(`${JSON.stringify(name)}: {`);
  return index < 0 ? 1 : text.slice(0, index).split('\n').length;
}
