import { describe, expect, it } from 'vitest';
import { parseYamlText } from '../../../src/config/yaml-source.js';
import { createToolSchemaCompiler } from '../../../src/registry/ajv.js';
import { checkToolSchema } from '../../../src/registry/schema-checks.js';

/** Checks the `input` of a manifest written as YAML; returns ok or the problems as `line:col reason`. */
function check(yaml: string): true | string[] {
  const parsed = parseYamlText(yaml, 'tool.yaml');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const data = parsed.source.data as { input: Record<string, unknown> };
  const result = checkToolSchema(parsed.source, 'input', data.input, createToolSchemaCompiler());
  return result.ok ? true : result.problems.map((problem) => `${problem.line}:${problem.col} ${problem.reason}`);
}

describe('checkToolSchema', () => {
  it.each([
    ['2020-12', 'https://json-schema.org/draft/2020-12/schema'],
    ['2020-12 with an empty fragment', 'https://json-schema.org/draft/2020-12/schema#'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema'],
    ['draft-07', 'http://json-schema.org/draft-07/schema#'],
    ['draft-07 without the fragment', 'http://json-schema.org/draft-07/schema'],
  ])('accepts the standard draft %s', (_label, uri) => {
    expect(check(`input:\n  $schema: "${uri}"\n  type: object\n`)).toBe(true);
  });

  it.each([
    ['draft-04', 'http://json-schema.org/draft-04/schema#'],
    ['a look-alike over http', 'http://json-schema.org/draft/2020-12/schema'],
    ['a private metaschema', 'https://example.com/meta.json'],
  ])('refuses the non-standard $schema %s', (_label, uri) => {
    expect(check(`input:\n  $schema: "${uri}"\n  type: object\n`)).toEqual([`2:12 input schema: $schema "${uri}" is not a standard draft (allowed: 2020-12, 2019-09, draft-07)`]);
  });

  it('refuses references out of the schema wherever they are nested, and reports each', () => {
    const yaml = [
      'input:',
      '  type: object',
      '  properties:',
      '    a:',
      '      anyOf:',
      '        - $ref: "other.json#/x"',
      '        - $dynamicRef: "https://example.com/s#meta"',
      '  $defs:',
      '    b:',
      '      $id: "urn:example:b"',
      '',
    ].join('\n');
    expect(check(yaml)).toEqual([
      '6:17 input schema: $ref "other.json#/x" refers outside itself; only local "#..." references are allowed',
      '7:24 input schema: $dynamicRef "https://example.com/s#meta" refers outside itself; only local "#..." references are allowed',
      '10:12 input schema: $id "urn:example:b" refers outside itself; a tool schema must be self-contained',
    ]);
  });

  it('does not mistake data or a property named $ref for a reference', () => {
    const yaml = [
      'input:',
      '  type: object',
      '  properties:',
      '    $ref: { type: string, maxLength: 10, default: "http://x" }',
      '    c: { const: { $ref: "file:///etc/passwd" } }',
      '',
    ].join('\n');
    expect(check(yaml)).toBe(true);
  });

  it('needs a bound beside every pattern, string format and patternProperties', () => {
    const yaml = [
      'input:',
      '  type: object',
      '  properties:',
      '    when: { type: string, format: date-time }',
      '    count: { type: integer, format: int32 }',
      '    map:',
      '      type: object',
      '      patternProperties:',
      '        "^x": { type: string }',
      '',
    ].join('\n');
    expect(check(yaml)).toEqual([
      '4:35 input schema: a format needs a maxLength beside it (arguments are untrusted; an unbounded string against a format is slow)',
      '8:7 input schema: patternProperties needs propertyNames with a maxLength (arguments are untrusted)',
    ]);
  });

  it('refuses a schema that is not an object schema, naming what it is', () => {
    expect(check('input:\n  properties: {}\n')).toEqual(['2:3 input schema is not an object schema: it must have type: object (got undefined)']);
    expect(check('input:\n  type: [object, "null"]\n')).toEqual(['2:9 input schema is not an object schema: it must have type: object (got ["object","null"])']);
  });

  it('refuses a local reference that leads nowhere as not compiling', () => {
    expect(check('input:\n  type: object\n  properties:\n    a: { $ref: "#/$defs/missing" }\n')).toEqual([expect.stringMatching(/^1:1 input schema does not compile: /)]);
  });

  it('refuses a misspelt standard keyword (strict mode), not what 2020-12 leaves open', () => {
    expect(check('input:\n  type: object\n  properties:\n    a: { type: string, maxLenght: 9 }\n')).toEqual([
      '4:24 input schema: unknown keyword "maxLenght" (did you mean "maxLength"?)',
    ]);
  });

  // Where the mistake is written, in words: not Ajv's text at the input: line.
  it.each([
    [
      'a misspelt keyword, at the keyword',
      'input:\n  type: object\n  requried: [a]\n  properties:\n    a: { type: string }\n',
      '3:3 input schema: unknown keyword "requried" (did you mean "required"?)',
    ],
    [
      'an unknown type name, at its value',
      'input:\n  type: object\n  properties:\n    a:\n      type: strin\n',
      '5:13 input schema: properties.a.type must be a JSON Schema type: string, number, integer, boolean, object, array or null',
    ],
    ['a keyword value of the wrong kind', 'input:\n  type: object\n  required: a\n', '3:13 input schema: required must be an array'],
    [
      'a keyword that needs a type beside it',
      'input:\n  type: object\n  properties:\n    a:\n      properties: {}\n',
      '4:5 input schema: "properties" applies to object values: write type: object beside it (at properties.a)',
    ],
  ])('says %s', (_what, yaml, problem) => {
    expect(check(yaml)).toEqual([problem]);
  });

  // Valid 2020-12 that Ajv's strict mode calls style errors: unknown formats are annotations,
  // x- keywords are extensions (the 2026-07-28 x-mcp-header), required names need no property.
  it('accepts unknown formats, x- keywords and required names absent from properties', () => {
    expect(check('input:\n  type: object\n  properties:\n    a: { type: string, format: colour, maxLength: 9 }\n')).toBe(true);
    expect(check('input:\n  type: object\n  x-extension: true\n  properties:\n    a: { type: string, x-mcp-header: Region }\n')).toBe(true);
    expect(check('input:\n  type: object\n  required: [a, b]\n  properties:\n    a: { type: string }\n')).toBe(true);
  });

  it('counts depth over every nested value, at the 64 level boundary', () => {
    // input (1) → properties (2) → p (3) → properties (4) ...: 64 levels pass, 65 do not.
    const nest = (levels: number): string => {
      let schema: unknown = { type: 'object' };
      for (let level = 3; level <= levels; level += 2) schema = { type: 'object', properties: { p: schema } };
      return `input: ${JSON.stringify(schema)}\n`;
    };
    expect(check(nest(63))).toBe(true);
    expect(check(nest(65))).toEqual([expect.stringContaining('input schema nests deeper than 64 levels')]);
  });
});
