// Builds a real workspace on disk (manifests, their entry files, repository and
// organisation policies) in a temporary folder, and loads it the way the host does.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { loadHostConfig, type HostConfig } from '../../src/host-config.js';

export interface WorkspaceFiles {
  /** Relative path under manifests/ → YAML. An isolate/worker entry `./tool.js` is written beside each. */
  readonly manifests?: Readonly<Record<string, string>>;
  /** Relative path under the workspace's policies/ → YAML (the repository layer). */
  readonly repository?: Readonly<Record<string, string>>;
  /** File name → YAML, written outside the workspace and passed as --policy, in this order. */
  readonly organisation?: Readonly<Record<string, string>>;
  /** Extra files (relative to the workspace) → content. */
  readonly files?: Readonly<Record<string, string>>;
}

export interface TestWorkspace {
  /** Realpath of the workspace (also the cwd, so display paths are relative). */
  readonly dir: string;
  readonly orgDir: string;
  readonly orgFiles: readonly string[];
  load(env?: NodeJS.ProcessEnv): HostConfig;
  cleanup(): void;
}

/** Writes the files and returns a workspace that loads them. */
export function makeWorkspace(files: WorkspaceFiles): TestWorkspace {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-policy-')));
  const dir = join(root, 'ws');
  const orgDir = join(root, 'org');
  mkdirSync(join(dir, 'manifests'), { recursive: true });
  mkdirSync(orgDir, { recursive: true });
  const write = (path: string, content: string): void => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  };
  for (const [name, yaml] of Object.entries(files.manifests ?? {})) {
    write(join(dir, 'manifests', name), yaml);
    write(join(dir, 'manifests', dirname(name), 'tool.js'), 'export default async () => ({ ok: true });\n');
  }
  for (const [name, yaml] of Object.entries(files.repository ?? {})) write(join(dir, 'policies', name), yaml);
  for (const [name, content] of Object.entries(files.files ?? {})) write(join(dir, name), content);
  const orgFiles = Object.entries(files.organisation ?? {}).map(([name, yaml]) => {
    write(join(orgDir, name), yaml);
    return join(orgDir, name);
  });
  return {
    dir,
    orgDir,
    orgFiles,
    load: (env = {}) => loadHostConfig({ manifestDirs: [join(dir, 'manifests')], policyFiles: orgFiles, workspace: dir, cwd: dir, env }),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface ManifestOptions {
  readonly sideEffect?: string | null;
  readonly timeoutMs?: number;
  readonly mode?: 'isolate' | 'worker' | 'process';
  readonly isolation?: 'none' | 'namespace';
  readonly memoryMb?: number;
  readonly env?: readonly string[];
  readonly roots?: readonly { path: string; access: 'read' | 'read_write' }[];
  readonly network?: readonly string[];
  readonly maxResultBytes?: number;
  readonly approval?: 'auto' | 'always';
}

/** A valid manifest YAML; options change one aspect at a time. Line numbers are stable: see LINES. */
export function manifestYaml(name: string, options: ManifestOptions = {}): string {
  const mode = options.mode ?? 'isolate';
  const lines = [
    `name: ${name}`,
    `description: The ${name} test tool.`,
    options.sideEffect === null ? '# unclassified' : `sideEffect: ${options.sideEffect ?? 'read_only'}`,
    `timeoutMs: ${options.timeoutMs ?? 1000}`,
    'sandbox:',
    `  mode: ${mode}`,
    ...(options.memoryMb !== undefined ? [`  memoryMb: ${options.memoryMb}`] : []),
    ...(mode === 'process' ? ['  command: ["python3", "-c", "print(1)"]', `  isolation: ${options.isolation ?? 'namespace'}`] : []),
    ...(options.env ? [`  env: [${options.env.join(', ')}]`] : []),
    ...(mode === 'process' ? [] : ['entry: ./tool.js']),
    ...(options.roots ? ['workspace:', '  roots:', ...options.roots.flatMap((root) => [`    - path: "${root.path}"`, `      access: ${root.access}`])] : []),
    ...(options.network ? ['network:', `  allow: [${options.network.map((host) => JSON.stringify(host)).join(', ')}]`] : []),
    ...(options.maxResultBytes !== undefined ? ['limits:', `  maxResultBytes: ${options.maxResultBytes}`] : []),
    ...(options.approval ? [`approval: ${options.approval}`] : []),
    'input:',
    '  type: object',
    '  additionalProperties: false',
    '  properties:',
    '    path: { type: string, maxLength: 100 }',
  ];
  return `${lines.join('\n')}\n`;
}

/** A policy file: `kind` and `name` lines, then the body. */
export function policyYaml(name: string, body: string): string {
  return `kind: Policy\nname: ${name}\n${body.trim()}\n`;
}

/** The 1-based line of the first line of `yaml` containing `needle`. */
export function lineOf(yaml: string, needle: string): number {
  const index = yaml.split('\n').findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`"${needle}" not in YAML`);
  return index + 1;
}

/** The test workspaces of one file: each removed after its test. */
export interface TestWorkspaces {
  /** Writes the files; the workspace is this test's current one. */
  make(files: WorkspaceFiles): TestWorkspace;
  /** make() and load, expecting no configuration problem. */
  load(files: WorkspaceFiles, env?: NodeJS.ProcessEnv): HostConfig;
  /** This test's workspace, once made. */
  current(): TestWorkspace | undefined;
}

export function useTestWorkspaces(): TestWorkspaces {
  let workspace: TestWorkspace | undefined;
  afterEach(() => {
    workspace?.cleanup();
    workspace = undefined;
  });
  const make = (files: WorkspaceFiles): TestWorkspace => (workspace = makeWorkspace(files));
  return {
    make,
    load(files, env = {}) {
      const config = make(files).load(env);
      expect(config.problems).toEqual([]);
      return config;
    },
    current: () => workspace,
  };
}
