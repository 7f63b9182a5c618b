// The manifest format lives in one file, schemas/manifest.schema.json, read by
// this loader and by editors alike. It is found by walking up from this module
// to the package root, so the same code works from src/ (tests) and dist/src/.
import { schemaPath } from '../config/package-files.js';
import { readFileSync } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { validate as generatedManifestValidator } from './generated/manifest.mjs';
import { isRecord } from '../config/guards.js';

/** Absolute path of schemas/manifest.schema.json in this package. */
export function manifestSchemaPath(): string {
  return schemaPath('manifest.schema.json');
}

/**
 * The tool-manifest schema (plain JSON): the `else` branch of schemas/manifest.schema.json,
 * whose `then` branch is the `kind: Server` schema (editors see both kinds in one file).
 */
export function readManifestSchema(): Record<string, unknown> {
  return branchOf(readWholeSchema(), (whole) => whole['else']);
}

function readWholeSchema(): Record<string, unknown> {
  return JSON.parse(readFileSync(manifestSchemaPath(), 'utf8')) as Record<string, unknown>;
}

// A branch compiled on its own keeps the file's draft.
function branchOf(whole: Record<string, unknown>, pick: (whole: Record<string, unknown>) => unknown): Record<string, unknown> {
  const branch = pick(whole);
  if (!isRecord(branch)) throw new Error(`${manifestSchemaPath()} lacks a manifest branch`);
  return { $schema: whole['$schema'], ...branch };
}

// The schema is a constant of the package, so reading it once per process is safe.
let cachedSchema: Record<string, unknown> | undefined;

/** The schema's validator, generated from it ahead (scripts/generate-validators.mjs): never compiled at start. */
const MANIFEST_VALIDATOR = generatedManifestValidator;

/** The manifest schema, read once. */
function manifestSchema(): Readonly<Record<string, unknown>> {
  cachedSchema ??= readManifestSchema();
  return cachedSchema;
}

/** Validates one manifest's data against the schema; returns every error (allErrors: our own config). */
export function checkManifestShape(data: unknown): readonly ErrorObject[] {
  return MANIFEST_VALIDATOR(data) ? [] : [...(MANIFEST_VALIDATOR.errors ?? [])];
}

/**
 * The condition under which a conditional rule of the schema applies, from the
 * `$comment` of its then/else branch ("when sandbox.mode is process"), or undefined.
 */
export function conditionOf(schemaPath: string): string | undefined {
  const match = /^#(.*?\/(?:then|else))(?:\/|$)/.exec(schemaPath);
  if (!match?.[1]) return undefined;
  let node: unknown = manifestSchema();
  for (const raw of match[1].slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = Array.isArray(node) ? node[Number(segment)] : isRecord(node) ? node[segment] : undefined;
  }
  return isRecord(node) && typeof node['$comment'] === 'string' ? node['$comment'] : undefined;
}

interface ManifestKey {
  /** Dotted, with [] for array items: `workspace.roots[].access`. */
  readonly key: string;
  readonly description: string;
  /** Allowed values, when the key is an enum. */
  readonly values?: readonly string[];
  readonly required: boolean;
}

/** Every key of the manifest format with its description, in schema order (for docs and the reference-table check). */
export function listManifestKeys(schema: Record<string, unknown> = readManifestSchema()): ManifestKey[] {
  const keys: ManifestKey[] = [];
  const visit = (node: Record<string, unknown>, prefix: string): void => {
    const properties = node['properties'];
    if (!isRecord(properties)) return;
    const required = Array.isArray(node['required']) ? (node['required'] as unknown[]) : [];
    for (const [name, child] of Object.entries(properties)) {
      if (!isRecord(child)) continue;
      const key = `${prefix}${name}`;
      const values = Array.isArray(child['enum']) ? child['enum'].map(String) : undefined;
      keys.push({ key, description: typeof child['description'] === 'string' ? child['description'] : '', required: required.includes(name), ...(values ? { values } : {}) });
      // input and output hold JSON Schemas of the tool, not manifest keys.
      if (key === 'input' || key === 'output') continue;
      visit(child, `${key}.`);
      const items = child['items'];
      if (isRecord(items)) visit(items, `${key}[].`);
    }
  };
  visit(schema, '');
  return keys;
}
