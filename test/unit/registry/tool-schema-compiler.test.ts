// The tool-schema compiler shares one validator between identical schemas
// (start-up with many tools) and never between different ones or drafts; the
// package's own schemas, compiled unchecked at run time, are valid.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { schemaPath } from '../../../src/config/package-files.js';
import { createToolSchemaCompiler } from '../../../src/registry/ajv.js';

const schema = () => ({ type: 'object', additionalProperties: false, required: ['text'], properties: { text: { type: 'string', maxLength: 10 } } });

describe('createToolSchemaCompiler', () => {
  it('compiles an identical schema once and validates with it', () => {
    const compiler = createToolSchemaCompiler();
    const first = compiler.compile(schema(), '2020-12');
    const second = compiler.compile(schema(), '2020-12');
    expect(second).toBe(first);
    expect(first({ text: 'hi' })).toBe(true);
    expect(first({ text: 'x'.repeat(11) })).toBe(false);
    expect(first.errors?.[0]).toMatchObject({ instancePath: '/text', keyword: 'maxLength' });
  });

  it('compiles a different schema, or the same one under another draft, separately', () => {
    const compiler = createToolSchemaCompiler();
    const base = compiler.compile(schema(), '2020-12');
    const wider = compiler.compile({ ...schema(), properties: { text: { type: 'string', maxLength: 20 } } }, '2020-12');
    expect(wider).not.toBe(base);
    expect(wider({ text: 'x'.repeat(15) })).toBe(true);
    expect(base({ text: 'x'.repeat(15) })).toBe(false);
    expect(compiler.compile(schema(), 'draft-07')).not.toBe(base);
  });

  it('compiles a 2020-12 or 2019-09 schema with an $anchor, and resolves a $ref to it; draft-07 has no $anchor', () => {
    const anchored = {
      type: 'object',
      $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { city: { type: 'string' } } } },
      properties: { home: { $ref: '#/$defs/address' }, work: { $ref: '#addressDef' } },
    };
    for (const draft of ['2020-12', '2019-09'] as const) {
      const validate = createToolSchemaCompiler().compile(anchored, draft);
      expect(validate({ home: { city: 'Oslo' }, work: { city: 'Bergen' } })).toBe(true);
      expect(validate({ work: { city: 7 } })).toBe(false);
      expect(validate.errors?.[0]).toMatchObject({ instancePath: '/work/city', keyword: 'type' });
    }
    expect(catchError(() => createToolSchemaCompiler().compile(anchored, 'draft-07'))).toMatchObject({ message: expect.stringContaining('$anchor') });
  });

  it('keeps refusing a schema that does not compile', () => {
    const compiler = createToolSchemaCompiler();
    const bad = { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } };
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const thrown = catchError(() => compiler.compile(bad, '2020-12'));
      expect(thrown).toMatchObject({ missingRef: expect.stringContaining('#/$defs/missing') });
    }
  });
});

describe('the package schemas', () => {
  // Their validators are generated without checking them against their meta-schema: this does.
  it.each(['manifest.schema.json', 'policy.schema.json', 'toolhost.schema.json'])('%s is valid JSON Schema 2020-12', (file) => {
    const ajv = new Ajv2020({ strict: false });
    const schema = JSON.parse(readFileSync(schemaPath(file), 'utf8')) as Record<string, unknown>;
    expect(ajv.validateSchema(schema), ajv.errorsText()).toBe(true);
  });
});

function catchError(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
