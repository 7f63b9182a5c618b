// A tool schema that Ajv refuses to compile, said as a person can act on it and
// placed where the mistake is: `requried` at the line and column of `requried`,
// not of `input:`. Ajv says where only in its message text (an unknown keyword
// by name, a meta-schema fault as `data/properties/a/type`, a strict-mode fault
// as `at "#/properties/a"`), so the message is read here, in one place.
import { closestKey } from '../config/closest-key.js';
import type { Problem } from '../config/problem.js';
import type { YamlPath, YamlSource } from '../config/yaml-source.js';
import { walkSubschemas } from './schema-checks.js';

/** The keywords of JSON Schema 2020-12 (with draft-07's and 2019-09's), for "did you mean". */
const KEYWORDS = [
  '$schema',
  '$id',
  '$ref',
  '$defs',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  '$comment',
  '$vocabulary',
  'definitions',
  'dependencies',
  '$recursiveRef',
  '$recursiveAnchor',
  'type',
  'enum',
  'const',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'dependentRequired',
  'dependentSchemas',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'minContains',
  'maxContains',
  'minItems',
  'maxItems',
  'uniqueItems',
  'unevaluatedItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
];

const UNKNOWN_KEYWORD = /^strict mode: unknown keyword: "([^"]+)"/;
const META_FAULT = /^schema is invalid: data((?:\/[^\s,]*)?) ([^,]+)/;
const STRICT_AT = /^strict mode: (.*?) at "#([^"]*)"(?: \(\w+\))?$/;

/** The problem of a schema at `root` ("input" or "output") that Ajv did not compile. */
export function compileErrorProblem(source: YamlSource, root: 'input' | 'output', schema: Readonly<Record<string, unknown>>, message: string): Problem {
  const unknown = UNKNOWN_KEYWORD.exec(message);
  if (unknown) {
    const keyword = unknown[1]!;
    const at = pathOfKeyword(schema, keyword);
    const hint = closestKey(keyword, KEYWORDS);
    return source.problemAt(
      [root, ...at, keyword],
      `${root} schema: unknown keyword "${keyword}"${hint !== undefined ? ` (did you mean "${hint}"?)` : ' (extensions are written x-…)'}`,
      'key',
    );
  }
  const meta = META_FAULT.exec(message);
  if (meta) {
    const path = pathOfPointer(meta[1] ?? '');
    const keyword = path[path.length - 1];
    return source.problemAt([root, ...path], `${root} schema: ${describe(path)} ${readableFault(keyword, meta[2]!.trim())}`);
  }
  const strict = STRICT_AT.exec(message);
  if (strict) {
    const path = pathOfPointer(strict[2] ?? '');
    return source.problemAt([root, ...path], `${root} schema: ${readableStrict(strict[1]!)} (at ${describe(path)})`, 'key');
  }
  return source.problemAt([root], `${root} schema does not compile: ${message.split('\n')[0] ?? message}`, 'key');
}

// Where in the schema a keyword is written: the first subschema that has it.
function pathOfKeyword(schema: Readonly<Record<string, unknown>>, keyword: string): YamlPath {
  let found: YamlPath | undefined;
  walkSubschemas(schema, [], (node, path) => {
    if (found === undefined && Object.hasOwn(node, keyword)) found = path;
  });
  return found ?? [];
}

function pathOfPointer(pointer: string): (string | number)[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
}

function describe(path: readonly (string | number)[]): string {
  return path.length === 0
    ? 'the schema'
    : path
        .map((segment) => (typeof segment === 'number' ? `[${segment}]` : segment))
        .join('.')
        .replace(/\.\[/g, '[');
}

function readableFault(keyword: string | number | undefined, fault: string): string {
  if (keyword === 'type' && fault === 'must be equal to one of the allowed values') return 'must be a JSON Schema type: string, number, integer, boolean, object, array or null';
  if (fault === 'must be equal to one of the allowed values') return 'has a value this keyword does not take';
  const kind = /^must be (array|object|integer|number|string|boolean)$/.exec(fault);
  if (kind) return `must be ${kind[1] === 'array' || kind[1] === 'object' || kind[1] === 'integer' ? 'an' : 'a'} ${kind[1]}`;
  return fault;
}

function readableStrict(text: string): string {
  const missingType = /^missing type "(\w+)" for keyword "(\w+)"$/.exec(text);
  if (missingType) return `"${missingType[2]}" applies to ${missingType[1]} values: write type: ${missingType[1]} beside it`;
  return text;
}
