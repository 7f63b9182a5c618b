// The manifest reference (docs/manifests.md), the policy reference
// (docs/policies.md) and the --json field table (docs/cli.md) are kept in step
// with schemas/*.schema.json and the code: every schema key has a row and every
// row is a schema key; the documented policy defaults are the built-in ones.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { POLICY_DEFAULTS } from '../../../src/policy/defaults.js';
import { TOOL_SUMMARY_FIELDS } from '../../../src/cli/tool-summary.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The page that holds each reference section. */
const PAGES: Record<string, string> = {
  'Manifest reference': 'docs/manifests.md',
  'Policy reference': 'docs/policies.md',
  '--json output': 'docs/cli.md',
};

type SchemaNode = Record<string, unknown>;

describe('documentation reference tables', () => {
  it('Manifest reference: every key of manifest.schema.json, and nothing else', () => {
    // The tool-manifest branch; the kind: Server branch is documented in "Server manifest reference".
    const schema = readSchema('manifest.schema.json')['else'] as SchemaNode;
    // input and output hold JSON Schemas written by tool authors: their insides are not manifest keys.
    expect(sorted(tableKeys(section('Manifest reference')))).toEqual(sorted(schemaKeys(schema, schema, '', ['input', 'output'])));
  });

  it('Policy reference: every key of policy.schema.json, and nothing else', () => {
    const schema = readSchema('policy.schema.json');
    expect(sorted(tableKeys(section('Policy reference')))).toEqual(sorted(schemaKeys(schema, schema, '', [])));
  });

  it('Policy reference: the documented defaults are the built-in defaults', () => {
    const rows = tableRows(section('Policy reference'));
    const documented = (key: string): string | undefined => rows.get(key)?.[2];
    const defaults: Record<string, unknown> = {
      strict: POLICY_DEFAULTS.strict,
      'tools.allow': POLICY_DEFAULTS.toolsAllow,
      'tools.deny': POLICY_DEFAULTS.toolsDeny,
      'sideEffects.deny': POLICY_DEFAULTS.sideEffectsDeny,
      'sideEffects.requireApproval': POLICY_DEFAULTS.requireApproval,
      'trust.firstParty': POLICY_DEFAULTS.firstParty,
      'sandbox.community': POLICY_DEFAULTS.community,
      'workspace.allowedRoots': POLICY_DEFAULTS.allowedRoots,
      'network.allow': POLICY_DEFAULTS.networkAllow,
      'env.allow': POLICY_DEFAULTS.envAllow,
      'env.secrets': POLICY_DEFAULTS.envSecrets,
      onUnknownTool: POLICY_DEFAULTS.onUnknownTool,
      onInvalidArguments: POLICY_DEFAULTS.onInvalidArguments,
      'approvals.by': POLICY_DEFAULTS.approvalsBy,
      'approvals.expireAfterMs': POLICY_DEFAULTS.approvalsExpireAfterMs,
      ...Object.fromEntries(Object.entries(POLICY_DEFAULTS.limits).map(([key, value]) => [`limits.${key}`, value])),
    };
    for (const [key, value] of Object.entries(defaults)) expect([key, documented(key)]).toEqual([key, `\`${JSON.stringify(value)}\``]);
  });

  it('--json output: the list fields are the fields list --json prints', () => {
    expect(tableKeys(section('--json output'))).toEqual([...TOOL_SUMMARY_FIELDS]);
  });
});

function readSchema(name: string): SchemaNode {
  return JSON.parse(readFileSync(`${ROOT}schemas/${name}`, 'utf8')) as SchemaNode;
}

/** Dotted keys of every property, following local $refs, items (as `[]`) and oneOf/anyOf/allOf branches. */
function schemaKeys(node: unknown, root: SchemaNode, prefix: string, opaque: readonly string[]): string[] {
  if (typeof node !== 'object' || node === null) return [];
  const schema = node as SchemaNode;
  const keys: string[] = [];
  const ref = schema['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/$defs/')) {
    keys.push(...schemaKeys((root['$defs'] as SchemaNode)[ref.slice('#/$defs/'.length)], root, prefix, opaque));
  }
  for (const combinator of ['oneOf', 'anyOf', 'allOf']) {
    for (const branch of (schema[combinator] as unknown[] | undefined) ?? []) keys.push(...schemaKeys(branch, root, prefix, opaque));
  }
  if (schema['items'] !== undefined) keys.push(...schemaKeys(schema['items'], root, `${prefix}[]`, opaque));
  for (const [name, child] of Object.entries((schema['properties'] as SchemaNode | undefined) ?? {})) {
    const key = prefix === '' ? name : `${prefix}.${name}`;
    keys.push(key);
    if (!opaque.includes(key)) keys.push(...schemaKeys(child, root, key, opaque));
  }
  return [...new Set(keys)];
}

function section(title: string): string {
  const page = PAGES[title] ?? 'README.md';
  const text = readFileSync(`${ROOT}${page}`, 'utf8');
  const start = text.indexOf(`\n## ${title}\n`);
  expect(start, `${page} has a "## ${title}" section`).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** Table rows whose first cell is a backticked key, by key. */
function tableRows(text: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const match = /^\| `([^`]+)` \|/.exec(line);
    if (!match?.[1]) continue;
    // Split on cell separators, not on escaped pipes inside cells.
    rows.set(
      match[1],
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

function tableKeys(text: string): string[] {
  return [...tableRows(text).keys()];
}

function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}
