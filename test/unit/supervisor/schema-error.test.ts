// describeError against the real tool-schema compiler: path, keyword and the
// expected sub-schema, including schemas reached through $ref.
import { describe, expect, it } from 'vitest';
import { createToolSchemaCompiler } from '../../../src/registry/ajv.js';
import { describeError } from '../../../src/supervisor/schema-error.js';

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['user'],
  properties: {
    user: { $ref: '#/$defs/user' },
    tags: { type: 'array', items: { type: 'string', maxLength: 5 } },
  },
  $defs: {
    user: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 }, 'a/b': { type: 'integer' } } },
  },
} as const;

const validate = createToolSchemaCompiler().compile(schema, '2020-12');

function detailsFor(value: unknown) {
  expect(validate(value)).toBe(false);
  const first = validate.errors?.[0];
  if (!first) throw new Error('no error');
  return describeError(first, schema);
}

describe('describeError', () => {
  it.each([
    [{}, { path: '/user', keyword: 'required', expected: schema.$defs.user }],
    [{ user: {} }, { path: '/user/name', keyword: 'required', expected: { type: 'string', minLength: 1 } }],
    [{ user: { name: '' } }, { path: '/user/name', keyword: 'minLength', expected: { type: 'string', minLength: 1 } }],
    [{ user: { name: 'x', 'a/b': 'no' } }, { path: '/user/a~1b', keyword: 'type', expected: { type: 'integer' } }],
    [
      { user: { name: 'x' }, tags: ['toolong'] },
      { path: '/tags/0', keyword: 'maxLength', expected: { type: 'string', maxLength: 5 } },
    ],
    [
      { user: { name: 'x' }, other: 1 },
      { path: '/other', keyword: 'additionalProperties', expected: false, allowed: ['user', 'tags'] },
    ],
  ])('describes %j', (value, expected) => {
    expect(detailsFor(value)).toEqual(expected);
  });
});
