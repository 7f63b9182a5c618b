// Loads one `kind: Server` manifest (SPEC section 2.1) from its parsed YAML:
// schemas/manifest.schema.json ($defs/server) → command and root paths → a frozen
// ServerManifest. Problems carry file:line:col like tool manifests'.
import type { ValidateFunction } from 'ajv';
import type { Problem } from '../config/problem.js';
import type { YamlSource } from '../config/yaml-source.js';
import { createConfigAjv } from './ajv.js';
import { readServerManifestSchema } from './manifest-schema.js';
import type { ManifestRoot, SideEffect } from './manifest.js';
import { resolveCommandElement, resolveRoot, WORKSPACE_VARIABLE } from './manifest-paths.js';
import { problemsFromShapeErrors } from './schema-errors.js';
import { DEFAULT_STARTUP_TIMEOUT_MS, type ServerManifest, type ServerToolEntry } from './server-manifest.js';

export interface ServerPlace {
  readonly file: string;
  readonly displayFile: string;
  /** Absolute, symlink-resolved folder holding the manifest. */
  readonly dir: string;
  /** Absolute, symlink-resolved. */
  readonly workspace: string;
}

export type ServerLoadResult = { readonly ok: true; readonly server: ServerManifest } | { readonly ok: false; readonly problems: Problem[] };

/** True when parsed YAML declares an upstream server rather than a tool. */
export function isServerManifestData(data: unknown): boolean {
  return typeof data === 'object' && data !== null && !Array.isArray(data) && (data as Record<string, unknown>)['kind'] === 'Server';
}

let compiled: ValidateFunction | undefined;

/** Checks and normalizes one server manifest; every problem at once. */
export function loadServerManifest(source: YamlSource, place: ServerPlace): ServerLoadResult {
  compiled ??= createConfigAjv().compile(readServerManifestSchema());
  const problems = compiled(source.data) ? [] : problemsFromShapeErrors(source, [...(compiled.errors ?? [])]);
  const data = source.data as Record<string, unknown>;

  const command: string[] = [];
  const declaredCommand = Array.isArray(data['command']) ? (data['command'] as unknown[]) : [];
  declaredCommand.forEach((element, index) => {
    if (typeof element !== 'string') return;
    // ${WORKSPACE} may appear in arguments (the server's own root argument); never in the program.
    const substituted = index > 0 ? element.split(WORKSPACE_VARIABLE).join(place.workspace) : element;
    const result = resolveCommandElement(place.dir, substituted, index);
    if (result.ok) command.push(result.path);
    else problems.push(source.problemAt(['command', index], result.reason));
  });

  const roots: ManifestRoot[] = [];
  const workspace = record(data['workspace']);
  const declaredRoots = Array.isArray(workspace['roots']) ? (workspace['roots'] as unknown[]) : [];
  declaredRoots.forEach((root, index) => {
    const entry = record(root);
    if (typeof entry['path'] !== 'string') return;
    const result = resolveRoot(entry['path'], place.workspace);
    if (!result.ok) problems.push(source.problemAt(['workspace', 'roots', index, 'path'], result.reason));
    else if (entry['access'] === 'read' || entry['access'] === 'read_write') roots.push({ declared: entry['path'], path: result.path, access: entry['access'] });
  });
  if (problems.length > 0) return { ok: false, problems };

  const sandbox = record(data['sandbox']);
  const network = record(data['network']);
  const limits = record(data['limits']);
  const tools: ServerToolEntry[] = Object.entries(record(data['tools'])).map(([pattern, value]) => {
    const entry = record(value);
    return Object.freeze({
      pattern,
      ...(entry['sideEffect'] !== undefined ? { sideEffect: entry['sideEffect'] as SideEffect } : {}),
      ...(entry['idempotent'] !== undefined ? { idempotent: entry['idempotent'] as boolean } : {}),
      ...(entry['concurrencySafe'] !== undefined ? { concurrencySafe: entry['concurrencySafe'] as boolean } : {}),
      ...(entry['timeoutMs'] !== undefined ? { timeoutMs: entry['timeoutMs'] as number } : {}),
      ...(entry['approval'] !== undefined ? { approval: entry['approval'] as 'auto' | 'always' } : {}),
      ...(entry['terminal'] !== undefined ? { terminal: entry['terminal'] as boolean } : {}),
      ...(entry['effects'] !== undefined ? { effects: entry['effects'] as NonNullable<ServerToolEntry['effects']> } : {}),
      hidden: entry['hidden'] === true,
    });
  });
  const server: ServerManifest = {
    kind: 'Server',
    name: data['name'] as string,
    description: data['description'] as string,
    command: Object.freeze(command),
    isolation: (sandbox['isolation'] as 'none' | 'namespace' | undefined) ?? 'namespace',
    ...(sandbox['memoryMb'] !== undefined ? { memoryMb: sandbox['memoryMb'] as number } : {}),
    env: Object.freeze([...((sandbox['env'] as string[] | undefined) ?? [])]),
    startupTimeoutMs: (sandbox['startupTimeoutMs'] as number | undefined) ?? DEFAULT_STARTUP_TIMEOUT_MS,
    roots: Object.freeze(roots.map((root) => Object.freeze(root))),
    networkAllow: Object.freeze([...((network['allow'] as string[] | undefined) ?? [])]),
    timeoutMs: data['timeoutMs'] as number,
    ...(limits['maxResultBytes'] !== undefined ? { maxResultBytes: limits['maxResultBytes'] as number } : {}),
    tools: Object.freeze(tools),
    file: place.file,
    displayFile: place.displayFile,
    dir: place.dir,
    source,
  };
  return { ok: true, server: Object.freeze(server) };
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
