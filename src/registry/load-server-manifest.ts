// Loads one `kind: Server` manifest (SPEC section 2.1) from its parsed YAML:
// schemas/manifest.schema.json ($defs/server) → command and root paths → a frozen
// ServerManifest. Problems carry file:line:col like tool manifests'.
import { asRecord, isRecord } from '../config/guards.js';
import type { Problem } from '../config/problem.js';
import type { YamlSource } from '../config/yaml-source.js';
import { validate as generatedServerManifestValidator } from './generated/server-manifest.mjs';
import type { ManifestRoot, SideEffect } from './manifest.js';
import { resolveCommandElement, resolveRoot, WORKSPACE_VARIABLE } from './manifest-paths.js';
import { problemsFromShapeErrors } from './schema-errors.js';
import { readSandboxEnv } from './sandbox-env.js';
import { DEFAULT_STARTUP_TIMEOUT_MS, type ServerInstances, type ServerManifest, type ServerToolEntry } from './server-manifest.js';

interface ServerPlace {
  readonly file: string;
  readonly displayFile: string;
  /** Absolute, symlink-resolved folder holding the manifest. */
  readonly dir: string;
  /** Absolute, symlink-resolved. */
  readonly workspace: string;
}

type ServerLoadResult = { readonly ok: true; readonly server: ServerManifest } | { readonly ok: false; readonly problems: Problem[] };

/** True when parsed YAML declares an upstream server rather than a tool. */
export function isServerManifestData(data: unknown): boolean {
  return isRecord(data) && data['kind'] === 'Server';
}

/** `$defs.server` of schemas/manifest.schema.json as code, generated ahead (scripts/generate-validators.mjs). */
const SERVER_MANIFEST_VALIDATOR = generatedServerManifestValidator;

/** Checks and normalizes one server manifest; every problem at once. */
export function loadServerManifest(source: YamlSource, place: ServerPlace): ServerLoadResult {
  const problems = SERVER_MANIFEST_VALIDATOR(source.data) ? [] : problemsFromShapeErrors(source, [...(SERVER_MANIFEST_VALIDATOR.errors ?? [])]);
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
  const workspace = asRecord(data['workspace']);
  const declaredRoots = Array.isArray(workspace['roots']) ? (workspace['roots'] as unknown[]) : [];
  declaredRoots.forEach((root, index) => {
    const entry = asRecord(root);
    if (typeof entry['path'] !== 'string') return;
    const result = resolveRoot(entry['path'], place.workspace);
    if (!result.ok) problems.push(source.problemAt(['workspace', 'roots', index, 'path'], result.reason));
    else if (entry['access'] === 'read' || entry['access'] === 'read_write') roots.push({ declared: entry['path'], path: result.path, access: entry['access'] });
  });
  const sandbox = asRecord(data['sandbox']);
  const env = readSandboxEnv(source, sandbox['env'], ['sandbox', 'env'], place.workspace);
  if (!env.ok) problems.push(...env.problems);
  const instances = data['instances'] as ServerInstances | undefined;
  if (instances === undefined) problems.push(...instancesProblems(source, asRecord(data['tools'])));
  if (problems.length > 0 || !env.ok) return { ok: false, problems };

  const network = asRecord(data['network']);
  const limits = asRecord(data['limits']);
  const tools: ServerToolEntry[] = Object.entries(asRecord(data['tools'])).map(([pattern, value]) => {
    const entry = asRecord(value);
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
    env: env.env.names,
    envLiterals: env.env.literals,
    startupTimeoutMs: (sandbox['startupTimeoutMs'] as number | undefined) ?? DEFAULT_STARTUP_TIMEOUT_MS,
    roots: Object.freeze(roots.map((root) => Object.freeze(root))),
    networkAllow: Object.freeze([...((network['allow'] as string[] | undefined) ?? [])]),
    timeoutMs: data['timeoutMs'] as number,
    ...(instances !== undefined ? { instances } : {}),
    ...(limits['maxResultBytes'] !== undefined ? { maxResultBytes: limits['maxResultBytes'] as number } : {}),
    tools: Object.freeze(tools),
    file: place.file,
    displayFile: place.displayFile,
    dir: place.dir,
    source,
  };
  return { ok: true, server: Object.freeze(server) };
}

/** Why a server whose entries give read_only and other classes must say `instances`. */
export const INSTANCES_REQUIRED_REASON =
  'missing required key "instances": this server has read_only and other tools. ' +
  '"instances: split" serves the read_only tools by an instance of their own whose roots are all read-only ' +
  '(the class is enforced; in-memory state is not shared with the instance that serves the others); ' +
  '"instances: one" serves every tool by one process (state is kept; the read_only class is declared, not enforced by the operating system). ' +
  'A server that keeps state in memory needs "one".';

// Both kinds among the entries that offer tools: read_only, and a class that may change something.
function instancesProblems(source: YamlSource, tools: Record<string, unknown>): Problem[] {
  const classes = Object.values(tools).flatMap((value) => {
    const entry = asRecord(value);
    return entry['hidden'] === true || typeof entry['sideEffect'] !== 'string' ? [] : [entry['sideEffect']];
  });
  const hasBoth = classes.includes('read_only') && classes.some((sideEffect) => sideEffect !== 'read_only');
  return hasBoth ? [source.problemAt(['tools'], INSTANCES_REQUIRED_REASON, 'key')] : [];
}
