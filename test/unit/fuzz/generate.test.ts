import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { createRandom, generateCases } from '../../../src/fuzz/generate.js';

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['path', 'mode'],
  properties: {
    path: { type: 'string', minLength: 1, maxLength: 20 },
    mode: { enum: ['a', 'b'] },
    limit: { type: 'integer', minimum: 1, maximum: 50 },
    ratio: { type: 'number' },
    tags: { type: 'array', items: { type: 'string', maxLength: 5 }, maxItems: 3 },
    deep: { type: 'object', additionalProperties: false, required: ['on'], properties: { on: { type: 'boolean' } } },
  },
};

describe('generateCases', () => {
  const validate = new Ajv2020({ strict: true }).compile(schema);
  const cases = generateCases(schema, 50, 7);

  it('generates arguments the schema accepts', () => {
    expect(cases.valid).toHaveLength(50);
    for (const args of cases.valid) expect(validate(args), JSON.stringify({ args, errors: validate.errors })).toBe(true);
  });

  it('generates one near miss per broken rule, each refused by the schema', () => {
    const mutations = cases.invalid.map((miss) => miss.mutation);
    for (const expected of [
      'missing required path',
      'missing required mode',
      'extra property',
      'path: wrong type (number)',
      'mode: out of enum',
      'path: maxLength + 1',
      'path: minLength - 1',
      'limit: maximum + 1',
      'limit: minimum - 1',
      'tags: maxItems + 1',
      'deep: wrong type (number)',
    ]) {
      expect(mutations).toContain(expected);
    }
    for (const miss of cases.invalid) expect(validate(miss.args), miss.mutation).toBe(false);
  });

  it('is reproducible from its seed', () => {
    expect(generateCases(schema, 10, 3)).toEqual(generateCases(schema, 10, 3));
    expect(createRandom(1)()).not.toBe(createRandom(2)());
  });
});
