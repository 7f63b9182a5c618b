// Loads every tool manifest under the given folders: YAML with positions →
// schemas/manifest.schema.json → path and schema rules → normalized, frozen
// Manifest. Every problem of every file is reported at once; a file with any
// problem yields no manifest, and a name declared twice yields neither.
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { realPathOr } from '../config/real-path.js';
import { dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Problem } from '../config/problem.js';
import { readYamlFile, type YamlSource } from '../config/yaml-source.js';
import { createToolSchemaCompiler, type ToolSchemaCompiler } from './ajv.js';
import type { Manifest } from './manifest.js';
import { checkEffects } from './manifest-effects.js';
import { checkManifestShape } from './manifest-schema.js';
import { compareProblems, normalizeManifest, type CheckedParts } from './normalize-manifest.js';
import { resolveCommandElement, resolveEntry, resolveRoot } from './manifest-paths.js';
import { problemsFromShapeErrors } from './schema-errors.js';
import { checkToolSchema } from './schema-checks.js';
import { isServerManifestData, loadServerManifest } from './load-server-manifest.js';
import type { ServerManifest } from './server-manifest.js';
import { NO_ENV, readSandboxEnv } from './sandbox-env.js';
import { isRecord } from '../config/guards.js';

/** A manifest file larger than this is refused unread. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

interface LoadManifestsOptions {
  /** Folders searched recursively for *.yaml and *.yml; relative to cwd. */
  readonly dirs: readonly string[];
  /** What ${WORKSPACE} stands for in root paths; relative to cwd. */
  readonly workspace: string;
  /** Base for relative paths and for displayFile; default process.cwd(). */
  readonly cwd?: string;
  /** How a manifest file is named in problems and rules; default relative to cwd when inside it. */
  readonly displayPathOf?: (absolute: string) => string;
}

interface LoadManifestsResult {
  /** Manifests without any problem, in file order. */
  readonly manifests: Manifest[];
  /** `kind: Server` manifests without any problem (SPEC section 2.1), in file order. */
  readonly servers: ServerManifest[];
  /** Every problem found, sorted by file, line and column. */
  readonly problems: Problem[];
}

/** Loads and checks every manifest under `dirs`. */
export function loadManifests(options: LoadManifestsOptions): LoadManifestsResult {
  const cwd = resolve(options.cwd ?? process.cwd());
  const workspace = realPathOr(resolve(cwd, options.workspace));
  const displayPathOf = options.displayPathOf ?? ((file: string) => displayPath(cwd, file));
  const compiler = createToolSchemaCompiler();
  const problems: Problem[] = [];
  const named: NamedFile[] = [];
  const servers: ServerManifest[] = [];
  const seenFiles = new Set<string>();
  // Every manifest of a folder shares its folder: resolved once per load, not once per file.
  const realDirs = new Map<string, string>();
  const realDirOf = (file: string): string => {
    const dir = dirname(file);
    let real = realDirs.get(dir);
    if (real === undefined) realDirs.set(dir, (real = realPathOr(dir)));
    return real;
  };
  for (const dir of options.dirs) {
    const absolute = resolve(cwd, dir);
    const found = findManifestFiles(absolute);
    if (!found.ok) {
      problems.push({ file: displayPathOf(absolute), line: 1, col: 1, reason: found.reason });
      continue;
    }
    for (const file of found.files) {
      // Overlapping folders (manifests and manifests/community) must not make a tool collide with itself.
      const key = realPathOr(file);
      if (seenFiles.has(key)) continue;
      seenFiles.add(key);
      const result = loadManifestFile(file, { cwd, workspace, compiler, displayPathOf, realDirOf });
      if (!result.ok) problems.push(...result.problems);
      if (result.ok && result.server) servers.push(result.server);
      else if (result.source && !isServerManifestData(result.source.data)) named.push({ source: result.source, manifest: result.ok ? result.manifest : undefined });
    }
  }

  const manifests = dropDuplicateNames(named, problems);
  problems.sort(compareProblems);
  return { manifests, servers: dropDuplicateServers(servers, problems), problems };
}

interface LoadFileContext {
  readonly cwd: string;
  /** How the file is named in problems and rules; default relative to cwd when inside it. */
  readonly displayPathOf?: (absolute: string) => string;
  /** Absolute, symlink-resolved. */
  readonly workspace: string;
  readonly compiler: ToolSchemaCompiler;
  /** The symlink-resolved folder of a manifest file (absolute). */
  readonly realDirOf: (file: string) => string;
}

/** `source` is set whenever the YAML parsed, so duplicate names are found even in files with other problems. */
type LoadFileResult =
  | { readonly ok: true; readonly manifest: Manifest; readonly source: YamlSource; readonly server?: undefined }
  | { readonly ok: true; readonly server: ServerManifest; readonly source: YamlSource; readonly manifest?: undefined }
  | { readonly ok: false; readonly problems: Problem[]; readonly source?: YamlSource };

/** Loads one manifest file (absolute path) with every problem it has. */
function loadManifestFile(file: string, context: LoadFileContext): LoadFileResult {
  const displayFile = context.displayPathOf ? context.displayPathOf(file) : displayPath(context.cwd, file);
  const tooLarge = sizeProblem(file, displayFile);
  if (tooLarge) return { ok: false, problems: [tooLarge] };
  const parsed = readYamlFile(file, displayFile);
  if (!parsed.ok) return { ok: false, problems: parsed.problems };
  const source = parsed.source;
  if (isServerManifestData(source.data)) {
    const loaded = loadServerManifest(source, { file, displayFile, dir: context.realDirOf(file), workspace: context.workspace });
    return loaded.ok ? { ok: true, server: loaded.server, source } : { ok: false, problems: loaded.problems.sort(compareProblems), source };
  }
  const problems = problemsFromShapeErrors(source, checkManifestShape(source.data));
  if (!isRecord(source.data)) return { ok: false, problems, source };

  const dir = context.realDirOf(file);
  const parts = checkParts(source, source.data, dir, context, problems);
  problems.push(...checkEffects(source, source.data));
  if (problems.length > 0) return { ok: false, problems: problems.sort(compareProblems), source };
  return { ok: true, manifest: normalizeManifest(source, source.data, { file, displayFile, dir, parts }), source };
}

// The checks the schema cannot express: paths on disk, roots, tool schemas.
// Each reads the data defensively because it also runs when the schema failed.
function checkParts(source: YamlSource, data: Record<string, unknown>, dir: string, context: LoadFileContext, problems: Problem[]): CheckedParts {
  const parts: { -readonly [K in keyof CheckedParts]: CheckedParts[K] } = { roots: [], env: NO_ENV };

  if (typeof data['entry'] === 'string') {
    const entry = resolveEntry(dir, data['entry']);
    if (entry.ok) parts.entry = entry.path;
    else problems.push(source.problemAt(['entry'], entry.reason));
  }

  const sandbox = isRecord(data['sandbox']) ? data['sandbox'] : {};
  const command = sandbox['command'];
  if (Array.isArray(command)) {
    const resolved: string[] = [];
    command.forEach((element: unknown, index) => {
      if (typeof element !== 'string') return;
      const result = resolveCommandElement(dir, element, index);
      if (result.ok) resolved.push(result.path);
      else problems.push(source.problemAt(['sandbox', 'command', index], result.reason));
    });
    parts.command = resolved;
  }
  const env = readSandboxEnv(source, sandbox['env'], ['sandbox', 'env'], context.workspace);
  if (env.ok) parts.env = env.env;
  else problems.push(...env.problems);

  const workspace = isRecord(data['workspace']) ? data['workspace'] : {};
  const roots = Array.isArray(workspace['roots']) ? (workspace['roots'] as unknown[]) : [];
  roots.forEach((root, index) => {
    if (!isRecord(root) || typeof root['path'] !== 'string') return;
    const at = ['workspace', 'roots', index] as const;
    const result = resolveRoot(root['path'], context.workspace);
    if (!result.ok) problems.push(source.problemAt([...at, 'path'], result.reason));
    if (data['sideEffect'] === 'read_only' && root['access'] === 'read_write') {
      problems.push(source.problemAt([...at, 'access'], 'a read_only tool may not have a read_write root (access: read_write)'));
    }
    if (result.ok && (root['access'] === 'read' || root['access'] === 'read_write')) {
      parts.roots = [...parts.roots, { declared: root['path'], path: result.path, access: root['access'] }];
    }
  });

  for (const key of ['input', 'output'] as const) {
    const schema = data[key];
    if (!isRecord(schema)) continue;
    const checked = checkToolSchema(source, key, schema, context.compiler);
    if (!checked.ok) problems.push(...checked.problems);
    else if (key === 'input') parts.validateInput = checked.validate;
    else parts.validateOutput = checked.validate;
  }
  return parts;
}

type FoundFiles = { readonly ok: true; readonly files: string[] } | { readonly ok: false; readonly reason: string };

// Recursive, sorted, *.yaml and *.yml only. Symlinked folders are not followed
// (a link loop would never end); symlinked files are read like files. Below the
// folder given, node_modules/ (the packages a server was installed with, whose
// YAML files are CI workflows and funding notes) and folders whose name starts
// with `.` (.git, .github, editor state) are not manifests and are skipped.
function findManifestFiles(dir: string): FoundFiles {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unknown error';
    return { ok: false, reason: code === 'ENOENT' ? 'manifest folder does not exist' : `cannot read manifest folder (${code})` };
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (isSkippedFolder(entry.name)) continue;
      const nested = findManifestFiles(path);
      if (nested.ok) files.push(...nested.files);
    } else if (['.yaml', '.yml'].includes(extname(entry.name)) && isRegularFile(entry, path)) {
      files.push(path);
    }
  }
  return { ok: true, files };
}

/** True for a folder the manifest scan never enters (SPEC section 2). */
function isSkippedFolder(name: string): boolean {
  return name === 'node_modules' || name.startsWith('.');
}

interface NamedFile {
  readonly source: YamlSource;
  readonly manifest: Manifest | undefined;
}

// A name declared in two files is an error in both, and neither is loaded: never
// "last one wins". Files with other problems count too: fixing them must not
// reveal a clash that was there all along.
function dropDuplicateNames(named: readonly NamedFile[], problems: Problem[]): Manifest[] {
  const byName = new Map<string, NamedFile[]>();
  for (const entry of named) {
    const data = entry.source.data;
    const name = isRecord(data) && typeof data['name'] === 'string' ? data['name'] : undefined;
    if (name !== undefined) byName.set(name, [...(byName.get(name) ?? []), entry]);
  }
  const clashing = new Set<NamedFile>();
  for (const [name, entries] of byName) {
    if (entries.length < 2) continue;
    for (const entry of entries) {
      const others = entries.filter((other) => other !== entry).map((other) => other.source.file);
      problems.push(entry.source.problemAt(['name'], `duplicate tool name "${name}": also declared in ${others.join(', ')}`));
      clashing.add(entry);
    }
  }
  return named.flatMap((entry) => (entry.manifest && !clashing.has(entry) ? [entry.manifest] : []));
}

// Two servers of one name would list the same <name>__<tool> names: neither is loaded.
function dropDuplicateServers(servers: readonly ServerManifest[], problems: Problem[]): ServerManifest[] {
  const clashing = new Set<ServerManifest>();
  for (const server of servers) {
    const others = servers.filter((other) => other !== server && other.name === server.name);
    if (others.length === 0) continue;
    clashing.add(server);
    problems.push(server.source.problemAt(['name'], `duplicate server name "${server.name}": also declared in ${others.map((other) => other.displayFile).join(', ')}`));
  }
  return servers.filter((server) => !clashing.has(server));
}

// A manifest is a page of YAML; a huge file is a mistake or an attack, not a tool.
function sizeProblem(file: string, displayFile: string): Problem | undefined {
  try {
    const bytes = statSync(file).size;
    return bytes > MAX_MANIFEST_BYTES ? { file: displayFile, line: 1, col: 1, reason: `manifest is ${bytes} bytes; the limit is ${MAX_MANIFEST_BYTES}` } : undefined;
  } catch {
    return undefined; // readYamlFile reports the I/O error with its code.
  }
}

// Only regular files (or links to them) are read: a FIFO or device named x.yaml would block or never end.
function isRegularFile(entry: Dirent, path: string): boolean {
  if (entry.isFile()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function displayPath(cwd: string, file: string): string {
  const rel = relative(cwd, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}
