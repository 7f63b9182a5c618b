// Builds the frozen Manifest from data that passed every check: defaults
// applied, paths resolved, schemas compiled. Pure; no file access.
import type { ValidateFunction } from 'ajv';
import type { Problem } from '../config/problem.js';
import type { YamlSource } from '../config/yaml-source.js';
import type { Manifest, ManifestRoot, ManifestSandbox, SideEffect, ToolFormat } from './manifest.js';
import type { SandboxMode } from './manifest.js';
import type { SandboxEnv } from './sandbox-env.js';
import { normalizeEffects } from './manifest-effects.js';

/** What the disk and schema checks produced for one file. */
export interface CheckedParts {
  readonly entry?: string;
  readonly command?: readonly string[];
  readonly roots: readonly ManifestRoot[];
  readonly env: SandboxEnv;
  readonly validateInput?: ValidateFunction;
  readonly validateOutput?: ValidateFunction;
}

interface ManifestPlace {
  readonly file: string;
  readonly displayFile: string;
  readonly dir: string;
  readonly parts: CheckedParts;
}

/** The normalized, deeply frozen manifest. `data` must already have passed the manifest schema. */
export function normalizeManifest(source: YamlSource, data: Readonly<Record<string, unknown>>, place: ManifestPlace): Manifest {
  const sideEffect = data['sideEffect'] as SideEffect | undefined;
  const declaredSandbox = data['sandbox'] as Readonly<Record<string, unknown>>;
  const network = data['network'] as { allow?: string[] } | undefined;
  const limits = data['limits'] as { maxResultBytes?: number } | undefined;
  const { validateInput } = place.parts;
  const effects = normalizeEffects(data['effects'], data['input'] as Record<string, unknown>);
  if (!validateInput) throw new Error(`internal: ${place.file} has no compiled input schema`);

  const sandbox: ManifestSandbox = {
    mode: declaredSandbox['mode'] as SandboxMode,
    ...(declaredSandbox['memoryMb'] !== undefined ? { memoryMb: declaredSandbox['memoryMb'] as number } : {}),
    ...(place.parts.command ? { command: place.parts.command } : {}),
    stdout: (declaredSandbox['stdout'] as 'json' | 'text' | 'output' | undefined) ?? 'json',
    isolation: (declaredSandbox['isolation'] as 'none' | 'namespace' | undefined) ?? 'none',
    persistent: (declaredSandbox['persistent'] as boolean | undefined) ?? false,
    poolSize: (declaredSandbox['poolSize'] as number | undefined) ?? 1,
    env: place.parts.env.names,
    envLiterals: place.parts.env.literals,
  };
  const manifest: Manifest = {
    name: data['name'] as string,
    description: data['description'] as string,
    ...(sideEffect !== undefined ? { sideEffect } : {}),
    idempotent: (data['idempotent'] as boolean | undefined) ?? sideEffect === 'read_only',
    // Running beside other calls is only ever safe for a tool that changes nothing.
    concurrencySafe: ((data['concurrencySafe'] as boolean | undefined) ?? false) && sideEffect === 'read_only',
    timeoutMs: data['timeoutMs'] as number,
    sandbox,
    ...(place.parts.entry ? { entry: place.parts.entry } : {}),
    roots: place.parts.roots,
    networkAllow: network?.allow ?? [],
    ...(limits?.maxResultBytes !== undefined ? { maxResultBytes: limits.maxResultBytes } : {}),
    format: (data['format'] as ToolFormat | undefined) ?? 'json',
    approval: (data['approval'] as 'auto' | 'always' | undefined) ?? 'auto',
    terminal: (data['terminal'] as boolean | undefined) ?? false,
    ...(effects !== undefined ? { effects } : {}),
    input: data['input'] as Record<string, unknown>,
    ...(data['output'] !== undefined ? { output: data['output'] as Record<string, unknown> } : {}),
    validateInput,
    ...(place.parts.validateOutput ? { validateOutput: place.parts.validateOutput } : {}),
    file: place.file,
    displayFile: place.displayFile,
    dir: place.dir,
    source,
  };
  for (const key of ['sandbox', 'roots', 'networkAllow', 'input', 'output'] as const) deepFreeze(manifest[key]);
  return Object.freeze(manifest);
}

/** Orders problems by file, then line, then column. */
export function compareProblems(a: Problem, b: Problem): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return a.line - b.line || a.col - b.col;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
