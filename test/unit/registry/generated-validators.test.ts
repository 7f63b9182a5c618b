// The validators of the package's own schemas are generated code (src/registry/generated/,
// written by scripts/generate-validators.mjs): they must be what the schemas give now, and
// the generated 2020-12 meta-schema must answer as Ajv's compiled one does.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { createToolSchemaCompiler } from '../../../src/registry/ajv.js';
import { validatorModules } from '../../../scripts/generate-validators.mjs';

describe('the generated validators', () => {
  it.each(validatorModules())('are what scripts/generate-validators.mjs makes of the schemas now ($path)', ({ path, text }) => {
    // After a change to schemas/: npm run generate:validators.
    expect(readFileSync(path, 'utf8') === text).toBe(true);
  });

  it.each([
    { type: 'object', properties: { a: { type: 5 } } },
    { type: 'object', properties: { a: { minLength: -1 } } },
    { type: 'object', $defs: { x: { items: { type: 'foo' } } } },
    { type: 'object', properties: { a: { prefixItems: [{ enum: 3 }] } } },
    { type: 'object', required: ['a', 'a'] },
    { type: 'object', unevaluatedProperties: { type: ['x'] } },
    { type: 'object', $schema: 'https://json-schema.org/draft/2020-12/schema', properties: { a: { deprecated: 'yes' } } },
  ])('refuse a schema the 2020-12 meta-schema refuses, in the words of Ajv (%j)', (schema) => {
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validateSchema(schema)).toBe(false);
    expect(() => createToolSchemaCompiler().compile(schema, '2020-12')).toThrow(`schema is invalid: ${ajv.errorsText(ajv.errors)}`);
  });
});
