// Turns Ajv errors about a manifest into problems at the line and column of the
// offending key or value, with a reason a person can act on.
import { closestKey } from '../config/closest-key.js';
import type { ErrorObject } from 'ajv';
import type { Problem } from '../config/problem.js';
import type { YamlPath, YamlSource } from '../config/yaml-source.js';
import { conditionOf } from './manifest-schema.js';
import { isRecord } from '../config/guards.js';

/** One problem per distinct Ajv error, positioned in the YAML source. */
export function problemsFromShapeErrors(source: YamlSource, errors: readonly ErrorObject[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const problem = problemFromShapeError(source, error);
    if (!problem) continue;
    const key = `${problem.line}:${problem.col}:${problem.reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

/** `workspace.roots[0].access` for people. */
function describePath(path: YamlPath): string {
  let text = '';
  for (const segment of path) text += typeof segment === 'number' ? `[${segment}]` : text === '' ? segment : `.${segment}`;
  return text === '' ? 'the manifest' : text;
}

/** A JSON value shown in a reason, bounded so a huge value cannot flood the output. */
export function showValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function problemFromShapeError(source: YamlSource, error: ErrorObject): Problem | undefined {
  const path = pathOf(source.data, error.instancePath);
  const where = describePath(path);
  const params = error.params as Record<string, unknown>;
  const condition = conditionOf(error.schemaPath);
  const conditional = condition ? ` ${condition}` : '';
  // A key of a map checked by `propertyNames` (sandbox.env's names): the problem is the key itself.
  if (error.propertyName !== undefined && error.keyword !== 'propertyNames') {
    const meaning = (error.parentSchema as Record<string, unknown> | undefined)?.['$comment'];
    const expected = typeof meaning === 'string' ? `must be ${meaning}` : (error.message ?? 'is invalid');
    return source.problemAt([...path, error.propertyName], `key ${showValue(error.propertyName)} of ${where} ${expected}`, 'key');
  }
  switch (error.keyword) {
    case 'if':
    case 'propertyNames':
      // Only says which branch or key failed; the inner errors carry the facts (and the condition).
      return undefined;
    case 'additionalProperties': {
      const key = String(params['additionalProperty']);
      const properties = (error.parentSchema as Record<string, unknown> | undefined)?.['properties'];
      const hint = isRecord(properties) ? closestKey(key, Object.keys(properties)) : undefined;
      return source.problemAt([...path, key], `unknown key "${describePath([...path, key])}"${hint ? ` (did you mean "${hint}"?)` : ''}`, 'key');
    }
    case 'required': {
      const key = String(params['missingProperty']);
      return source.problemAt(path, `missing required key "${describePath([...path, key])}"${conditional}`);
    }
    case 'false schema':
      return source.problemAt(path, `key "${where}" is not allowed${conditional}`, 'key');
    case 'enum':
      return source.problemAt(path, `${where} must be one of ${(params['allowedValues'] as unknown[]).join(', ')} (got ${showValue(valueAt(source.data, path))})`);
    case 'type':
      return source.problemAt(
        path,
        path.length === 0 ? 'a manifest must be a YAML mapping' : `${where} must be of type ${String(params['type'])} (got ${showValue(valueAt(source.data, path))})`,
      );
    case 'pattern': {
      // The schema says in words what the pattern means, where a person would not read the regex.
      const meaning = (error.parentSchema as Record<string, unknown> | undefined)?.['$comment'];
      const expected = typeof meaning === 'string' ? `must be ${meaning}` : `does not match ${String(params['pattern'])}`;
      return source.problemAt(path, `${where} ${showValue(valueAt(source.data, path))} ${expected}`);
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return source.problemAt(path, `${where} must be ${String(params['comparison'])} ${String(params['limit'])} (got ${showValue(valueAt(source.data, path))})`);
    default:
      return source.problemAt(path, `${where} ${error.message ?? 'is invalid'}`);
  }
}

// JSON Pointer → YAML path; numeric segments index arrays only where the data is an array.
function pathOf(data: unknown, pointer: string): YamlPath {
  if (pointer === '') return [];
  const path: (string | number)[] = [];
  let node = data;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(segment)) {
      path.push(Number(segment));
      node = node[Number(segment)];
    } else {
      path.push(segment);
      node = isRecord(node) ? node[segment] : undefined;
    }
  }
  return path;
}

function valueAt(data: unknown, path: YamlPath): unknown {
  let node = data;
  for (const segment of path) {
    if (typeof segment === 'number' && Array.isArray(node)) node = node[segment];
    else if (isRecord(node)) node = node[String(segment)];
    else return undefined;
  }
  return node;
}
