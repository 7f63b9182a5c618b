// The Ajv instances of the registry: one for the manifest format itself, and
// one per supported JSON Schema draft for the tools' input and output schemas.
// Each draft gets its own class because keyword meanings differ between drafts
// (items as an array, $recursiveRef, ...); mixing them in one instance would
// validate a draft-07 schema with 2020-12 semantics.
import AjvDraft07Module from 'ajv';
import Ajv2019Module from 'ajv/dist/2019.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Options, ValidateFunction } from 'ajv';
import type AjvCoreModule from 'ajv/dist/core.js';

export type Draft = '2020-12' | '2019-09' | 'draft-07';

/** `$schema` values a tool schema may carry, with and without the empty fragment. */
export const STANDARD_DRAFTS: Readonly<Record<string, Draft>> = {
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'https://json-schema.org/draft/2020-12/schema#': '2020-12',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'https://json-schema.org/draft/2019-09/schema#': '2019-09',
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'http://json-schema.org/draft-07/schema#': 'draft-07',
};

/** Compiles tool schemas: strict mode, no allErrors (arguments are untrusted), nothing loaded from outside. */
export interface ToolSchemaCompiler {
  compile(schema: Readonly<Record<string, unknown>>, draft: Draft): ValidateFunction;
}

// CommonJS default exports seen through NodeNext: the class is `.default`.
const Ajv2020 = Ajv2020Module.default;
const Ajv2019 = Ajv2019Module.default;
const AjvDraft07 = AjvDraft07Module.default;
const addFormats = addFormatsModule.default;
type AjvCore = AjvCoreModule.default;

const TOOL_SCHEMA_OPTIONS: Options = {
  strict: true,
  allowUnionTypes: true,
  allErrors: false,
  // No loadSchema: a reference Ajv cannot resolve locally fails compilation, it is never fetched.
  addUsedSchema: false,
  logger: false,
  // Skips the generated code's optimization pass (same checks, a little more
  // code): a third of every compile, paid once per tool at start-up.
  code: { optimize: false },
};

/**
 * A fresh set of per-draft instances; one per load so reloads do not grow
 * Ajv's caches forever. Identical schemas (same draft, same JSON) share one
 * compiled validator: compiling is most of the start-up time of a host with
 * many tools, and tools often repeat a schema. Sharing is safe because
 * validation is synchronous (strict mode, no $async) and callers read
 * `errors` right after their own call.
 */
export function createToolSchemaCompiler(): ToolSchemaCompiler {
  const compiled = new Map<string, ValidateFunction>();
  const instances = new Map<Draft, AjvCore>();
  const instanceFor = (draft: Draft): AjvCore => {
    let ajv = instances.get(draft);
    if (!ajv) {
      ajv =
        draft === '2020-12' ? new Ajv2020(TOOL_SCHEMA_OPTIONS) : draft === '2019-09' ? new Ajv2019(TOOL_SCHEMA_OPTIONS) : new AjvDraft07(TOOL_SCHEMA_OPTIONS);
      addFormats(ajv);
      instances.set(draft, ajv);
    }
    return ajv;
  };
  return {
    compile: (schema, draft) => {
      const key = `${draft}\n${JSON.stringify(schema)}`;
      let validate = compiled.get(key);
      if (validate === undefined) {
        validate = instanceFor(draft).compile(schema);
        compiled.set(key, validate);
      }
      return validate;
    },
  };
}

/** The Ajv instance for our own config files: all errors at once is fine for trusted input. */
export function createConfigAjv(): AjvCore {
  // strictRequired off: the manifest schema's if/then branches require keys defined one level up.
  // verbose: errors carry their schema, whose $comment explains a pattern in words.
  return new Ajv2020({ strict: true, strictRequired: false, allErrors: true, verbose: true, logger: false });
}
