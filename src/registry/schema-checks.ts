// Checks on a tool's input or output JSON Schema before it is compiled: an
// object schema, at most 64 levels deep, self-contained (only local "#..."
// references, so nothing is ever read or fetched), a standard draft, and the
// rules of Ajv's secure meta-schema (arguments are untrusted: an unbounded
// string against a regex or format is a denial of service). Then it is compiled
// once, in strict mode.
import type { ValidateFunction } from 'ajv';
import type { Problem } from '../config/problem.js';
import type { YamlPath, YamlSource } from '../config/yaml-source.js';
import { STANDARD_DRAFTS, type Draft, type ToolSchemaCompiler } from './ajv.js';
import { showValue } from './schema-errors.js';
import { compileErrorProblem } from './schema-compile-errors.js';
import { isRecord } from '../config/guards.js';

const MAX_SCHEMA_DEPTH = 64;

type SchemaCheck = { readonly ok: true; readonly validate: ValidateFunction } | { readonly ok: false; readonly problems: Problem[] };

/** Checks and compiles the schema found at `key` ("input" or "output") of a manifest. */
export function checkToolSchema(source: YamlSource, key: 'input' | 'output', schema: Readonly<Record<string, unknown>>, compiler: ToolSchemaCompiler): SchemaCheck {
  const root: YamlPath = [key];
  if (schema['type'] !== 'object') {
    const at = 'type' in schema ? [...root, 'type'] : root;
    return fail(source.problemAt(at, `${key} schema is not an object schema: it must have type: object (got ${showValue(schema['type'])})`));
  }
  const deep = findTooDeep(schema, [...root], 1);
  if (deep) return fail(source.problemAt(deep, `${key} schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`));

  const problems: Problem[] = [];
  walkSubschemas(schema, root, (node, path) => problems.push(...checkSubschema(source, key, node, path)));
  if (problems.length > 0) return { ok: false, problems };

  const draft = draftOf(schema);
  try {
    return { ok: true, validate: compiler.compile(schema, draft) };
  } catch (error) {
    const message = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
    return fail(compileErrorProblem(source, key, schema, message));
  }
}

function fail(problem: Problem): SchemaCheck {
  return { ok: false, problems: [problem] };
}

function draftOf(schema: Readonly<Record<string, unknown>>): Draft {
  const declared = schema['$schema'];
  return typeof declared === 'string' ? (STANDARD_DRAFTS[declared] ?? '2020-12') : '2020-12';
}

/**
 * Checks and compiles an upstream server's schema (SPEC section 2.1): only what is
 * unsafe is refused (not an object schema, deeper than 64, a reference or $id
 * outside itself, a non-standard $schema, does not compile); Ajv's strict-mode
 * style rules do not apply to other people's valid 2020-12.
 */
export function checkUpstreamSchema(schema: unknown, key: 'input' | 'output', compiler: ToolSchemaCompiler): UpstreamSchemaCheck {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { ok: false, reason: `${key} schema is not an object` };
  // A listing is checked where it arrives (in slices) and again where it is loaded: the same
  // schema object with the same compiler is checked once (the walks cost as much as a compile).
  let checked = CHECKED.get(compiler);
  if (checked === undefined) CHECKED.set(compiler, (checked = new WeakMap()));
  let byKey = checked.get(schema);
  if (byKey === undefined) checked.set(schema, (byKey = {}));
  return (byKey[key] ??= checkUncached(schema, key, compiler));
}

type UpstreamSchemaCheck = { ok: true; validate: ValidateFunction } | { ok: false; reason: string };

const CHECKED = new WeakMap<ToolSchemaCompiler, WeakMap<object, { input?: UpstreamSchemaCheck; output?: UpstreamSchemaCheck }>>();

function checkUncached(schema: object, key: 'input' | 'output', compiler: ToolSchemaCompiler): UpstreamSchemaCheck {
  const record = schema as Record<string, unknown>;
  if (record['type'] !== 'object') return { ok: false, reason: `${key} schema is not an object schema (type: ${showValue(record['type'])})` };
  if (findTooDeep(record, [], 1)) return { ok: false, reason: `${key} schema nests deeper than ${MAX_SCHEMA_DEPTH} levels` };
  let outside: string | undefined;
  walkSubschemas(record, [], (node) => {
    for (const keyword of ['$ref', '$dynamicRef', '$recursiveRef', '$id'] as const) {
      const value = node[keyword];
      if (outside === undefined && value !== undefined && (typeof value !== 'string' || !value.startsWith('#'))) outside = `${keyword} ${showValue(value)}`;
    }
    const declared = node['$schema'];
    if (outside === undefined && declared !== undefined && (typeof declared !== 'string' || !(declared in STANDARD_DRAFTS))) outside = `$schema ${showValue(declared)}`;
  });
  if (outside !== undefined) return { ok: false, reason: `${key} schema refers outside itself or to a non-standard draft (${outside}); nothing is fetched` };
  try {
    return { ok: true, validate: compiler.compile(withoutUnboundedPatterns(record), draftOf(record), { relaxed: true }) };
  } catch (error) {
    const message = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
    return { ok: false, reason: `${key} schema does not compile: ${message.slice(0, 200)}` };
  }
}

/**
 * The copy of an upstream schema the host validates with: a `pattern` or `format` on a
 * string without `maxLength` is left out. Such a schema is valid and is advertised as it
 * is, but a regular expression of the server's against a string of the caller's, unbounded,
 * would be work on the host's event loop that neither the host nor the caller controls
 * (SPEC section 3.1). The server still checks its own arguments.
 */
export function withoutUnboundedPatterns(schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const copy = structuredClone(schema) as Record<string, unknown>;
  walkSubschemas(copy, [], (node) => {
    const mutable = node as Record<string, unknown>;
    if (mutable['maxLength'] !== undefined) return;
    if (mutable['pattern'] !== undefined) delete mutable['pattern'];
    if (mutable['format'] !== undefined && !isNumeric(mutable['type'])) delete mutable['format'];
  });
  return copy;
}

function checkSubschema(source: YamlSource, key: string, node: Readonly<Record<string, unknown>>, path: YamlPath): Problem[] {
  const problems: Problem[] = [];
  const at = (keyword: string, reason: string, where: 'key' | 'value' = 'value'): void => {
    problems.push(source.problemAt([...path, keyword], `${key} schema: ${reason}`, where));
  };
  for (const keyword of ['$ref', '$dynamicRef', '$recursiveRef'] as const) {
    const ref = node[keyword];
    if (ref !== undefined && (typeof ref !== 'string' || !ref.startsWith('#'))) {
      at(keyword, `${keyword} ${showValue(ref)} refers outside itself; only local "#..." references are allowed`);
    }
  }
  const id = node['$id'];
  if (id !== undefined && (typeof id !== 'string' || !id.startsWith('#'))) {
    at('$id', `$id ${showValue(id)} refers outside itself; a tool schema must be self-contained`);
  }
  const declared = node['$schema'];
  if (declared !== undefined && (typeof declared !== 'string' || !(declared in STANDARD_DRAFTS))) {
    at('$schema', `$schema ${showValue(declared)} is not a standard draft (allowed: 2020-12, 2019-09, draft-07)`);
  }
  if (node['pattern'] !== undefined && node['maxLength'] === undefined) {
    at('pattern', 'a pattern needs a maxLength beside it (arguments are untrusted; an unbounded string against a regex is slow)');
  }
  if (node['format'] !== undefined && node['maxLength'] === undefined && !isNumeric(node['type'])) {
    at('format', 'a format needs a maxLength beside it (arguments are untrusted; an unbounded string against a format is slow)');
  }
  if (node['patternProperties'] !== undefined && !hasMaxLength(node['propertyNames'])) {
    at('patternProperties', 'patternProperties needs propertyNames with a maxLength (arguments are untrusted)', 'key');
  }
  return problems;
}

function isNumeric(type: unknown): boolean {
  return type === 'integer' || type === 'number';
}

function hasMaxLength(schema: unknown): boolean {
  return isRecord(schema) && schema['maxLength'] !== undefined;
}

// Keywords whose value is one subschema, a map of subschemas, or a list of them.
// Data keywords (const, enum, default, examples) are not walked: they hold values, not schemas.
const SINGLE = [
  'additionalProperties',
  'additionalItems',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'not',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
  'items',
];
const MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];
const LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];

/** Calls `visit` on every object subschema of `schema` (itself included), with its path. */
export function walkSubschemas(schema: Readonly<Record<string, unknown>>, path: YamlPath, visit: (node: Readonly<Record<string, unknown>>, path: YamlPath) => void): void {
  visit(schema, path);
  for (const keyword of SINGLE) {
    const child = schema[keyword];
    if (isRecord(child)) walkSubschemas(child, [...path, keyword], visit);
  }
  for (const keyword of MAPS) {
    const map = schema[keyword];
    if (!isRecord(map)) continue;
    for (const [name, child] of Object.entries(map)) if (isRecord(child)) walkSubschemas(child, [...path, keyword, name], visit);
  }
  for (const keyword of LISTS) {
    const list = schema[keyword];
    if (!Array.isArray(list)) continue;
    list.forEach((child: unknown, index) => {
      if (isRecord(child)) walkSubschemas(child, [...path, keyword, index], visit);
    });
  }
}

/**
 * The path of the first value nested deeper than MAX_SCHEMA_DEPTH (objects and arrays both
 * count), or undefined. `path` is the walk's own stack, copied only for the answer: a
 * thousand manifests are walked at start-up, and a path array per node was most of the walk.
 */
function findTooDeep(value: unknown, path: (string | number)[], depth: number): YamlPath | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth > MAX_SCHEMA_DEPTH) return [...path];
  const keys: readonly (string | number)[] = Array.isArray(value) ? value.map((_item: unknown, index) => index) : Object.keys(value);
  for (const key of keys) {
    path.push(key);
    const found = findTooDeep((value as Record<string | number, unknown>)[key], path, depth + 1);
    path.pop();
    if (found) return found;
  }
  return undefined;
}
