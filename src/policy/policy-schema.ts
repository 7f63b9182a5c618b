// schemas/policy.schema.json is the one source of truth for the policy format:
// this module validates with the code generated from it (scripts/generate-validators.mjs)
// and turns Ajv's errors into file:line:col problems, one per fault (an unknown
// key points at the key itself).
import { closestKey } from '../config/closest-key.js';
import type { ErrorObject } from 'ajv';
import { validate as generatedPolicyValidator } from '../registry/generated/policy.mjs';
import type { Problem } from '../config/problem.js';
import type { YamlPath, YamlSource } from '../config/yaml-source.js';
import type { PolicyDocument } from './policy-model.js';

/** Checks a parsed policy file against the schema; every fault becomes a positioned problem. */
export function checkPolicyDocument(source: YamlSource): { ok: true; data: PolicyDocument } | { ok: false; problems: Problem[] } {
  const validate = POLICY_VALIDATOR;
  if (validate(source.data)) return { ok: true, data: source.data as PolicyDocument };
  const errors = [...(validate.errors ?? [])];
  return { ok: false, problems: dedupe(problemsFrom(errors, source)).sort((a, b) => a.line - b.line || a.col - b.col) };
}

// Our own trusted schema: allErrors is fine and lists every problem of a file at once.
const POLICY_VALIDATOR = generatedPolicyValidator;

function problemsFrom(errors: readonly ErrorObject[], source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  for (const error of errors) {
    const path = pathOf(error.instancePath);
    const where = path.length === 0 ? 'policy file' : path.join('.');
    if (path[0] === 'onUnknownTool') {
      // oneOf reports a fault per branch; one sentence says it better.
      problems.push(source.problemAt(['onUnknownTool'], 'onUnknownTool must be protocol_error, error_result or {rewrite: tool_name}'));
      continue;
    }
    switch (error.keyword) {
      case 'additionalProperties': {
        const key = String((error.params as { additionalProperty: string }).additionalProperty);
        const known = Object.keys(propertiesAt(error.parentSchema));
        const hint = closestKey(key, known);
        problems.push(source.problemAt([...path, key], `unknown key "${key}" in ${where}${hint ? ` (did you mean "${hint}"?)` : ''}`, 'key'));
        break;
      }
      case 'required': {
        const key = String((error.params as { missingProperty: string }).missingProperty);
        problems.push(source.problemAt(path, `missing required key "${key}" in ${where}`));
        break;
      }
      case 'const':
        problems.push(source.problemAt(path, `${where} must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}`));
        break;
      case 'enum': {
        const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ');
        problems.push(source.problemAt(path, `${where} must be one of: ${allowed}`));
        break;
      }
      default:
        problems.push(source.problemAt(path, `${where} ${error.message ?? 'is invalid'}`));
    }
  }
  return problems;
}

function pathOf(instancePath: string): YamlPath {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
}

function propertiesAt(schema: unknown): Record<string, unknown> {
  if (typeof schema === 'object' && schema !== null && 'properties' in schema) {
    const properties = (schema as { properties: unknown }).properties;
    if (typeof properties === 'object' && properties !== null) return properties as Record<string, unknown>;
  }
  return {};
}

function dedupe(problems: readonly Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const id = `${problem.line}:${problem.col}:${problem.reason}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
