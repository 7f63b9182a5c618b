// The `effects` key of a tool manifest and of a server's `tools:` entry
// (SPEC section 2): which arguments are paths the tool writes, and which one
// holds the new text of the written file. Approvals show each written path as
// resolved, with a diff of a text write, so a person judges what the call does.
import type { Problem } from '../config/problem.js';
import type { YamlSource } from '../config/yaml-source.js';
import { isRecord } from '../config/guards.js';

export interface ManifestEffects {
  /** Names of top-level arguments that are paths the tool writes. */
  readonly writes: readonly string[];
  /** The argument holding the whole new text of the written file; null: no diff. */
  readonly content: string | null;
}

/** Argument names taken as the new text when `effects.content` is not written (one written path only). */
const CONVENTIONAL_CONTENT_ARGUMENTS = ['content', 'text'] as const;

/**
 * The normalized effects of data that passed the manifest schema. `content` left
 * out is inferred from the input schema only by name (`content`, `text`): a guess
 * from types alone would diff `move_file`'s source path as if it were the new text.
 */
export function normalizeEffects(declared: unknown, input: Readonly<Record<string, unknown>>): ManifestEffects | undefined {
  if (!isRecord(declared) || !Array.isArray(declared['writes'])) return undefined;
  const writes = Object.freeze(declared['writes'].filter((name): name is string => typeof name === 'string'));
  let content: string | null = null;
  if (typeof declared['content'] === 'string') content = declared['content'];
  else if (declared['content'] === undefined && writes.length === 1) {
    const properties = isRecord(input['properties']) ? input['properties'] : {};
    content = CONVENTIONAL_CONTENT_ARGUMENTS.find((name) => !writes.includes(name) && isStringProperty(properties[name])) ?? null;
  }
  return Object.freeze({ writes, content });
}

/**
 * Problems of a tool manifest's `effects`: every name must be a top-level string
 * argument of the input schema (a typo would show the approver nothing).
 */
export function checkEffects(source: YamlSource, data: Readonly<Record<string, unknown>>): Problem[] {
  const effects = data['effects'];
  const input = data['input'];
  if (!isRecord(effects) || !isRecord(input)) return [];
  const properties = isRecord(input['properties']) ? input['properties'] : {};
  const problems: Problem[] = [];
  const check = (name: unknown, at: readonly (string | number)[]): void => {
    if (typeof name !== 'string') return;
    if (!Object.hasOwn(properties, name)) problems.push(source.problemAt(at, `"${name}" is not an argument of this tool (input.properties)`));
    else if (!isStringProperty(properties[name])) problems.push(source.problemAt(at, `"${name}" must be a string argument (type: string) to be a path or a text`));
  };
  if (Array.isArray(effects['writes'])) effects['writes'].forEach((name, index) => check(name, ['effects', 'writes', index]));
  check(effects['content'], ['effects', 'content']);
  if (typeof effects['content'] === 'string' && Array.isArray(effects['writes']) && effects['writes'].includes(effects['content'])) {
    problems.push(source.problemAt(['effects', 'content'], `"${effects['content']}" is named as a written path too`));
  }
  return problems;
}

// `type: string`, or a type list that includes string; a property without `type` may hold anything.
function isStringProperty(schema: unknown): boolean {
  if (!isRecord(schema)) return false;
  const type = schema['type'];
  return type === 'string' || (Array.isArray(type) && type.includes('string'));
}
