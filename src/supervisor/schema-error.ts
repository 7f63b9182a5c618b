// What a JSON Schema failure tells a caller who must repair the value: the
// failing path, the keyword and the expected sub-schema (local $refs followed),
// for arguments (stages/validate-args.ts) and outputs alike.
import type { ErrorObject } from 'ajv';

interface ArgumentErrorDetails {
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
