// Argument validation (SPEC section 5 step 4) against the input schema the
// registry compiled once at load (without allErrors: arguments are untrusted,
// the first failure is enough). The error names the failing path, the keyword
// and the expected sub-schema, so a model can repair the call.
import type { ErrorObject } from 'ajv';
import { HostError } from '../errors.js';
import type { Manifest } from '../registry/manifest.js';
import { escapeForPrompt } from './prompt-text.js';

export type ToolArgs = Readonly<Record<string, unknown>>;

/** The arguments as an object (absent means `{}`), or `invalid_arguments`. */
export function validateArgs(manifest: Manifest, args: unknown): ToolArgs {
  const value = args ?? {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HostError('invalid_arguments', `The arguments of ${manifest.name} must be a JSON object.`, {
      path: '',
      keyword: 'type',
      expected: { type: 'object' },
    });
  }
  const validate = manifest.validateInput;
  if (validate(value)) return value as ToolArgs;
  // Ajv reuses `errors` on the next call: copy what we need now, before any await.
  const first = validate.errors?.[0];
  const details = first ? describeError(first, manifest.input) : { path: '', keyword: 'schema', expected: manifest.input };
  const where = details.path === '' ? 'the arguments' : `argument ${escapeForPrompt(details.path, 120)}`;
  const what =
    details.keyword === 'required'
      ? ' is required'
      : details.keyword === 'additionalProperties'
        ? ' is not allowed'
        : first?.message
          ? ` ${first.message}`
          : ' does not match the input schema';
  throw new HostError('invalid_arguments', `In ${manifest.name}, ${where}${what}.`, details);
}

export interface ArgumentErrorDetails {
  /** JSON Pointer into the arguments ('' is the whole object). */
  readonly path: string;
  /** The JSON Schema keyword that failed (type, required, enum...). */
  readonly keyword: string;
  /** The sub-schema the value at `path` must satisfy. */
  readonly expected: unknown;
  readonly [key: string]: unknown;
}

/** Maps one Ajv error to path, keyword and the expected sub-schema. */
export function describeError(error: ErrorObject, schema: Readonly<Record<string, unknown>>): ArgumentErrorDetails {
  const params = error.params as Record<string, unknown>;
  // Ajv's schemaPath ends with the failing keyword: its parent is the schema that applies at instancePath.
  const parentPointer = error.schemaPath.replace(/^#/, '').split('/').slice(0, -1).join('/');
  const parent = resolvePointer(schema, parentPointer);
  const missing = error.keyword === 'required' ? params['missingProperty'] : undefined;
  const extra = error.keyword === 'additionalProperties' ? params['additionalProperty'] : undefined;
  if (typeof missing === 'string') {
    const properties = (parent as { properties?: Record<string, unknown> } | undefined)?.properties;
    return {
      path: `${error.instancePath}/${escapePointer(missing)}`,
      keyword: 'required',
      expected: followLocalRefs(schema, properties?.[missing] ?? {}),
    };
  }
  if (typeof extra === 'string') {
    const allowed = Object.keys((parent as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
    return { path: `${error.instancePath}/${escapePointer(extra)}`, keyword: 'additionalProperties', expected: false, allowed };
  }
  return { path: error.instancePath, keyword: error.keyword, expected: parent ?? schema };
}

// A sub-schema that is only a local $ref says nothing by itself: show what it points to.
function followLocalRefs(root: unknown, node: unknown): unknown {
  let current = node;
  for (let hops = 0; hops < 8; hops++) {
    const ref = (current as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#') || Object.keys(current as object).length !== 1) return current;
    const target = resolvePointer(root, ref.slice(1));
    if (target === undefined) return current;
    current = target;
  }
  return current;
}

function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
