// principals: rules (SPEC sections 4 and 6.1): every entry of every enforced
// layer whose glob matches the caller can only take tools away; the rule is
// named `file:line principals.<glob>.tools.<allow|deny>`; stdio (no principal)
// meets none of them; shadow files do not enforce them; unknown keys are refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPolicies } from '../../../src/policy/load-policies.js';
import { decideForPrincipal, readPrincipalRules } from '../../../src/policy/principals.js';

let dir: string | undefined;

afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function load(files: Record<string, string>) {
  dir = mkdtempSync(join(tmpdir(), 'toolhost-principals-'));
  const paths = Object.entries(files).map(([name, text]) => {
    writeFileSync(join(dir!, name), text);
    return join(dir!, name);
  });
  return loadPolicies({ policyFiles: paths, workspace: join(dir, 'no-workspace'), cwd: dir });
}

const ORG = `kind: Policy
name: org
principals:
  "ci-*":
    tools:
      deny: ["*__write_*", "delete_*"]
  "contractor-*":
    tools:
      allow: ["read_*"]
`;

const TEAM = `kind: Policy
name: team
principals:
  "*":
    tools:
      deny: ["drop_table"]
`;

describe('decideForPrincipal', () => {
  const { files, problems } = load({ 'org.yaml': ORG, 'team.yaml': TEAM });
  const rules = readPrincipalRules(files);

  it.each([
    ['ci-bot', 'repo__write_file', 'deny', 'org.yaml:6 principals.ci-*.tools.deny'],
    ['ci-bot', 'delete_branch', 'deny', 'org.yaml:6 principals.ci-*.tools.deny'],
    ['ci-bot', 'read_file', 'allow', null],
    ['contractor-ann', 'read_file', 'allow', null],
    ['contractor-ann', 'write_file', 'deny', 'org.yaml:9 principals.contractor-*.tools.allow'],
    // A later layer tightens for everyone; it cannot loosen the earlier ones.
    ['alice', 'drop_table', 'deny', 'team.yaml:6 principals.*.tools.deny'],
    ['ci-bot', 'drop_table', 'deny', 'team.yaml:6 principals.*.tools.deny'],
    ['alice', 'delete_branch', 'allow', null],
  ])('%s calling %s: %s', (principal, tool, effect, rule) => {
    expect(problems).toEqual([]);
    const decision = decideForPrincipal(rules, tool, principal);
    expect(decision.effect).toBe(effect);
    if (decision.effect === 'deny') {
      expect(decision.code).toBe('policy_denied');
      expect(decision.rule).toBe(rule);
    }
  });

  it('a stdio call (no principal) meets no principals: rule', () => {
    expect(decideForPrincipal(rules, 'drop_table', null)).toEqual({ effect: 'allow' });
  });
});

describe('loading', () => {
  it('a shadow-mode file does not enforce its principals: rules', () => {
    const { files } = load({ 'shadow.yaml': ORG.replace('name: org', 'name: org\nmode: shadow') });
    expect(readPrincipalRules(files)).toEqual([]);
  });

  it('refuses unknown keys under a principal entry', () => {
    const { problems } = load({ 'bad.yaml': 'kind: Policy\nname: bad\nprincipals:\n  "ci-*":\n    tols: {deny: ["x"]}\n' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: 'bad.yaml', line: 5 });
    expect(problems[0]?.reason).toContain('unknown key "tols"');
  });
});

describe('explain --principal', () => {
  it('says what the principals: rules decide for that caller, naming the rule', async () => {
    const { makeWorkspace, manifestYaml } = await import('../../helpers/policy-workspace.js');
    const { explainTool, renderExplanation } = await import('../../../src/cli/explain.js');
    const workspace = makeWorkspace({ manifests: { 'delete_branch.yaml': manifestYaml('delete_branch') }, repository: { 'org.yaml': ORG } });
    try {
      const config = workspace.load();
      const view = config.tools.get('delete_branch')!;
      const denied = explainTool(config, view, undefined, 'ci-bot');
      expect(denied.principal).toEqual({
        name: 'ci-bot',
        decision: 'deny',
        rule: 'policies/org.yaml:6 principals.ci-*.tools.deny',
        reason: 'principal ci-bot may not call tools matching delete_*',
      });
      expect(renderExplanation(denied)).toContain('principal ci-bot: denied');
      expect(explainTool(config, view, undefined, 'alice').principal).toEqual({ name: 'alice', decision: 'allow', rule: null, reason: null });
      expect(explainTool(config, view, undefined).principal).toBeUndefined();
    } finally {
      workspace.cleanup();
    }
  });
});
