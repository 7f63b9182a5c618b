// Generates arguments from a tool's input schema: valid ones, and near misses
// that differ from a valid one in exactly one way (missing required, extra
// property, wrong type, out of enum, one past a length or range boundary).
// `toolhost fuzz` sends both through the server's own checks.
import { asRecord, isRecord } from '../config/guards.js';
import { typesOf } from '../formats/declaration.js';

type Schema = Readonly<Record<string, unknown>>;
type Args = Record<string, unknown>;

interface NearMiss {
  readonly args: Args;
  /** What was broken, e.g. "missing required path" or "tags: wrong type (number)". */
  readonly mutation: string;
}

interface FuzzCases {
  readonly valid: Args[];
  readonly invalid: NearMiss[];
  /** Required properties no value could be generated for (a pattern or format without `examples`). */
  readonly ungenerated: string[];
}

/** A small deterministic PRNG, so a failing case can be reproduced from its seed. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

export function generateCases(schema: Schema, count: number, seed = 1): FuzzCases {
  const random = createRandom(seed);
  const required = Array.isArray(schema['required']) ? schema['required'].map(String) : [];
  const base = generateObject(schema, random, 'full');
  const ungenerated = required.filter((name) => !(name in base));
  if (ungenerated.length > 0) return { valid: [], invalid: [], ungenerated };
  const valid: Args[] = [];
  for (let i = 0; i < count; i++) valid.push(generateObject(schema, random, i === 0 ? 'minimal' : i === 1 ? 'full' : 'random'));
  const invalid = nearMisses(schema, base, random).slice(0, Math.max(count, 1) * 4);
  return { valid, invalid, ungenerated };
}

function generateObject(schema: Schema, random: () => number, shape: 'minimal' | 'full' | 'random'): Args {
  const properties = asRecord(schema['properties']);
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []);
  const args: Args = {};
  for (const [name, propertySchema] of Object.entries(properties)) {
    const include = required.has(name) || shape === 'full' || (shape === 'random' && random() < 0.5);
    if (!include) continue;
    const value = generateValue(asRecord(propertySchema), random);
    if (value !== undefined) args[name] = value;
  }
  return args;
}

/** A value the schema accepts, or undefined when it cannot tell (e.g. a pattern without examples). */
function generateValue(schema: Schema, random: () => number, depth = 0): unknown {
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum'])) return schema['enum'][Math.floor(random() * schema['enum'].length)];
  if (Array.isArray(schema['examples']) && schema['examples'].length > 0) return schema['examples'][0];
  if ('default' in schema) return schema['default'];
  const type = typesOf(schema)[0];
  switch (type) {
    case 'string': {
      if (typeof schema['pattern'] === 'string' || typeof schema['format'] === 'string') return undefined;
      const min = numberOr(schema['minLength'], 0);
      const max = Math.min(numberOr(schema['maxLength'], min + 12), min + 12);
      const length = min + Math.floor(random() * (max - min + 1));
      return 'abcdefghijklmnopqrstuvwxyz'.repeat(4).slice(0, length).padEnd(length, 'z');
    }
    case 'integer':
    case 'number': {
      const min = numberOr(schema['minimum'], numberOr(schema['exclusiveMinimum'], -1) + 1);
      const max = numberOr(schema['maximum'], numberOr(schema['exclusiveMaximum'], min + 101) - 1);
      const value = min + Math.floor(random() * (Math.max(max - min, 0) + 1));
      return typeof schema['multipleOf'] === 'number' ? Math.ceil(value / schema['multipleOf']) * schema['multipleOf'] : value;
    }
    case 'boolean':
      return random() < 0.5;
    case 'null':
      return null;
    case 'array': {
      if (depth > 8) return [];
      const min = numberOr(schema['minItems'], 0);
      const max = Math.min(numberOr(schema['maxItems'], min + 3), min + 3);
      const items: unknown[] = [];
      const length = min + Math.floor(random() * (max - min + 1));
      for (let i = 0; i < length; i++) {
        const item = generateValue(asRecord(schema['items']), random, depth + 1);
        if (item === undefined) return undefined;
        items.push(item);
      }
      return schema['uniqueItems'] === true ? [...new Map(items.map((item) => [JSON.stringify(item), item])).values()] : items;
    }
    case 'object':
      return depth > 8 ? {} : generateObject(schema, random, 'minimal');
    default:
      return undefined;
  }
}

function nearMisses(schema: Schema, base: Args, random: () => number): NearMiss[] {
  const properties = asRecord(schema['properties']);
  const required = Array.isArray(schema['required']) ? schema['required'].map(String) : [];
  const out: NearMiss[] = [];
  const variant = (mutation: string, change: (args: Args) => void) => {
    const args = structuredClone(base);
    change(args);
    out.push({ args, mutation });
  };
  for (const name of required) variant(`missing required ${name}`, (args) => delete args[name]);
  if (schema['additionalProperties'] === false) variant('extra property', (args) => (args['__unexpected__'] = 1));
  for (const [name, raw] of Object.entries(properties)) {
    const propertySchema = asRecord(raw);
    const types = typesOf(propertySchema);
    if (types.length > 0 && !Array.isArray(propertySchema['enum'])) {
      const wrong = wrongTypeValue(types);
      if (wrong !== undefined) variant(`${name}: wrong type (${describe(wrong)})`, (args) => (args[name] = wrong));
    }
    if (Array.isArray(propertySchema['enum'])) variant(`${name}: out of enum`, (args) => (args[name] = `not-${random().toString(36).slice(2, 8)}`));
    if (typeof propertySchema['maxLength'] === 'number' && propertySchema['pattern'] === undefined) {
      variant(`${name}: maxLength + 1`, (args) => (args[name] = 'x'.repeat((propertySchema['maxLength'] as number) + 1)));
    }
    if (typeof propertySchema['minLength'] === 'number' && propertySchema['minLength'] > 0) {
      variant(`${name}: minLength - 1`, (args) => (args[name] = 'x'.repeat((propertySchema['minLength'] as number) - 1)));
    }
    if (typeof propertySchema['maximum'] === 'number') variant(`${name}: maximum + 1`, (args) => (args[name] = (propertySchema['maximum'] as number) + 1));
    if (typeof propertySchema['minimum'] === 'number') variant(`${name}: minimum - 1`, (args) => (args[name] = (propertySchema['minimum'] as number) - 1));
    if (typeof propertySchema['maxItems'] === 'number') {
      const item = generateValue(asRecord(propertySchema['items']), random);
      if (item !== undefined) {
        variant(
          `${name}: maxItems + 1`,
          (args) => (args[name] = Array.from({ length: (propertySchema['maxItems'] as number) + 1 }, (_, i) => (typeof item === 'string' ? `${item}${i}` : item))),
        );
      }
    }
  }
  return out;
}

function wrongTypeValue(types: readonly string[]): unknown {
  const candidates: Array<[string, unknown]> = [
    ['string', 12345],
    ['integer', 'not-a-number'],
    ['number', 'not-a-number'],
    ['boolean', 'yes'],
    ['array', { not: 'an array' }],
    ['object', ['not', 'an', 'object']],
    ['null', 'not-null'],
  ];
  // A value whose JSON type none of the allowed types accepts.
  const accepts = (value: unknown) =>
    types.some((type) =>
      type === 'integer'
        ? Number.isInteger(value)
        : type === 'number'
          ? typeof value === 'number'
          : type === 'array'
            ? Array.isArray(value)
            : type === 'null'
              ? value === null
              : type === 'object'
                ? isRecord(value)
                : typeof value === type,
    );
  return candidates.map(([, value]) => value).find((value) => !accepts(value));
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
}
