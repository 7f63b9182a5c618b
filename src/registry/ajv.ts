// The Ajv instances of the registry: one per supported JSON Schema draft for
// the tools' input and output schemas (the package's own schemas, and the
// 2020-12 meta-schema, are validated by generated code: generated/).
// Each draft gets its own class because keyword meanings differ between drafts
// (items as an array, $recursiveRef, ...); mixing them in one instance would
// validate a draft-07 schema with 2020-12 semantics.
import AjvDraft07Module from 'ajv';
import Ajv2019Module from 'ajv/dist/2019.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import type AjvCoreModule from 'ajv/dist/core.js';
import { validate as generatedMeta202012 } from './generated/meta-2020-12.mjs';

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

/** Compiles tool schemas: no allErrors (arguments are untrusted), nothing loaded from outside. */
export interface ToolSchemaCompiler {
  /** `relaxed`: an upstream server's schema, compiled without any strict-mode rule. */
  compile(schema: Readonly<Record<string, unknown>>, draft: Draft, options?: { readonly relaxed?: boolean }): ValidateFunction;
}

// CommonJS default exports seen through NodeNext: the class is `.default`.
const Ajv2020 = Ajv2020Module.default;
const Ajv2019 = Ajv2019Module.default;
const AjvDraft07 = AjvDraft07Module.default;
const addFormats = addFormatsModule.default;
type AjvCore = AjvCoreModule.default;

// Tool schemas are valid JSON Schema 2020-12 written by others (upstream servers
// above all): what the draft leaves open is not refused. `x-` extension keywords
// (`x-mcp-header`), unknown formats (annotations in 2020-12) and a `required`
// name absent from `properties` compile; a misspelt standard keyword in a
// manifest (`maxLenght`) still does not, as it is a typo, not an extension.
// Upstream schemas get no strict mode at all (`relaxed`): they are not ours to
// fix. What is unsafe is refused for both: references outside the schema and
// depth (schema-checks.ts), and a schema that does not compile.
const TOOL_SCHEMA_OPTIONS: Options = {
  strict: true,
  strictRequired: false,
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
 * `errors` right after their own call. Each schema is first checked against
 * its draft's meta-schema by a process-wide instance (metaSchemaCheck), so the
 * meta-schema is compiled once per process rather than once per load.
 */
export function createToolSchemaCompiler(): ToolSchemaCompiler {
  const compiled = new Map<string, ValidateFunction>();
  const instances = new Map<string, AjvCore>();
  const instanceFor = (draft: Draft, relaxed: boolean): AjvCore => {
    const instanceKey = `${draft}${relaxed ? ' relaxed' : ''}`;
    let ajv = instances.get(instanceKey);
    if (!ajv) {
      const options: Options = { ...TOOL_SCHEMA_OPTIONS, ...(relaxed ? { strict: false } : {}), validateSchema: false };
      ajv = newToolSchemaAjv(draft, options);
      instances.set(instanceKey, ajv);
    }
    return ajv;
  };
  return {
    compile: (schema, draft, options = {}) => {
      const relaxed = options.relaxed === true;
      const key = `${draft}${relaxed ? ' relaxed' : ''}\n${JSON.stringify(schema)}`;
      let validate = compiled.get(key);
      if (validate === undefined) {
        // Throws "schema is invalid: …" for a schema its meta-schema refuses, as compile would.
        checkAgainstMetaSchema(schema, draft);
        const ajv = instanceFor(draft, relaxed);
        if (!relaxed) allowExtensions(ajv, schema);
        validate = ajv.compile(schema);
        compiled.set(key, validate);
      }
      return validate;
    },
  };
}

function newToolSchemaAjv(draft: Draft, options: Options): AjvCore {
  const ajv = draft === '2020-12' ? new Ajv2020(options) : draft === '2019-09' ? new Ajv2019(options) : new AjvDraft07(options);
  addFormats(ajv);
  // Ajv resolves `$anchor` (2019-09 and 2020-12 core) but never registers it
  // as a keyword, so strict mode calls a schema that uses one "unknown keyword"
  // and a valid schema would be refused. Draft-07 has no $anchor (it names
  // anchors with `$id: "#name"`), so there it stays unknown.
  if (draft !== 'draft-07') ajv.addKeyword('$anchor');
  return ajv;
}

/** The 2020-12 meta-schema as code (scripts/generate-validators.mjs): the default draft is never compiled. */
const META_2020_12 = generatedMeta202012;

// Throws as Ajv's validateSchema(schema, true) does for a schema its draft's meta-schema refuses.
// A 2020-12 schema (no $schema, or 2020-12's) meets the generated meta-schema; another draft's,
// or a $schema Ajv does not know (its compile refuses it), goes to the instance of its draft.
function checkAgainstMetaSchema(schema: Readonly<Record<string, unknown>>, draft: Draft): void {
  const declared = schema['$schema'];
  if (draft !== '2020-12' || (declared !== undefined && (typeof declared !== 'string' || STANDARD_DRAFTS[declared] !== '2020-12'))) {
    void metaSchemaCheck(draft).validateSchema(schema, true);
    return;
  }
  if (!META_2020_12(schema)) throw new Error(`schema is invalid: ${errorsText(META_2020_12.errors ?? [])}`);
}

/** Errors in the words of Ajv's errorsText (`data/path message, …`). */
function errorsText(errors: readonly ErrorObject[]): string {
  return errors.map((error) => `data${error.instancePath} ${error.message ?? ''}`).join(', ');
}

// Per draft, the instance that checks tool schemas against the draft's
// meta-schema (its validateSchema throws "schema is invalid: …" as compile
// would): compiling a meta-schema costs tens of milliseconds, far more than a
// tool schema. It compiles nothing but the meta-schemas, which are constants,
// so every host in the process may share it; strict mode changes what a
// compile refuses, not what validating against the meta-schema answers, so one
// instance serves strict and relaxed compilers alike.
const metaSchemaChecks = new Map<Draft, AjvCore>();

function metaSchemaCheck(draft: Draft): AjvCore {
  let ajv = metaSchemaChecks.get(draft);
  if (ajv === undefined) metaSchemaChecks.set(draft, (ajv = newToolSchemaAjv(draft, TOOL_SCHEMA_OPTIONS)));
  return ajv;
}

// Registers the schema's `x-` keywords (as annotations) and unknown formats (as
// always valid, their 2020-12 default) on a strict instance, so strict mode is
// left with what it is good at: misspelt standard keywords.
function allowExtensions(ajv: AjvCore, schema: unknown): void {
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) return node.forEach(visit);
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('x-') && !ajv.getKeyword(key)) ajv.addKeyword(key);
      if (key === 'format' && typeof value === 'string' && !ajv.formats[value]) ajv.addFormat(value, true);
      visit(value);
    }
  };
  visit(schema);
}
