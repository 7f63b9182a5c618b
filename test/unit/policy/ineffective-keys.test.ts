// A repository key looser than the value in force has no effect (SPEC 4):
// `explain`'s rows mark the value in force and the rows it overrode, and
// `validate` warns about each such repository key at its file and line.
import { describe, expect, it } from 'vitest';
import { describePolicy } from '../../../src/policy/describe-policy.js';
import { ineffectiveRepositoryKeys } from '../../../src/policy/ineffective-keys.js';
import { lineOf, manifestYaml, policyYaml, useTestWorkspaces } from '../../helpers/policy-workspace.js';

const workspaces = useTestWorkspaces();

const ORG = policyYaml('org', ['strict: true', 'limits:', '  maxTimeoutMs: 20000', 'network:', '  allow: ["api.github.com"]', 'tools:', '  allow: ["read_*"]'].join('\n'));
const REPO = policyYaml(
  'repo',
  [
    'strict: false',
    'limits:',
    '  maxTimeoutMs: 60000',
    '  maxCallsPerSession: 10',
    'network:',
    '  allow: ["api.github.com", "evil.example"]',
    'tools:',
    '  allow: ["read_file", "*"]',
    'trust:',
    '  firstParty: ["**"]',
  ].join('\n'),
);

function loadBoth() {
  return workspaces.load({ manifests: { 'a.yaml': manifestYaml('read_file') }, organisation: { 'org.yaml': ORG }, repository: { 'repo.yaml': REPO } });
}

describe('explain rows', () => {
  it('mark the value in force and the rows it overrode', () => {
    const rows = describePolicy(loadBoth().policy.enforced);
    const orgFile = workspaces.current()?.orgFiles[0];
    const timeout = rows.filter((row) => row.key === 'limits.maxTimeoutMs').map((row) => [row.layer, row.value, row.status, row.overriddenBy]);
    expect(timeout).toEqual([
      ['organisation', 20000, 'in_force', undefined],
      ['repository', 60000, 'overridden', `${orgFile}:${lineOf(ORG, 'maxTimeoutMs')} limits.maxTimeoutMs`],
    ]);
    // The repository's tighter value wins: the built-in default is not a row, the repository's is in force.
    expect(rows.filter((row) => row.key === 'limits.maxCallsPerSession').map((row) => [row.layer, row.status])).toEqual([['repository', 'in_force']]);
    expect(rows.filter((row) => row.key === 'trust.firstParty').map((row) => [row.layer, row.value, row.status])).toEqual([
      ['built-in', [], 'in_force'],
      ['repository', ['**'], 'overridden'],
    ]);
    expect(rows.find((row) => row.key === 'network.allow' && row.layer === 'repository')).toMatchObject({ status: 'in_force', noEffect: ['evil.example'] });
  });
});

describe('validate warnings', () => {
  it('name every repository key looser than the value in force, at its line, and nothing else', () => {
    const warnings = ineffectiveRepositoryKeys(loadBoth().policy.enforced);
    expect(warnings.map((warning) => [warning.file, warning.line, warning.reason.split(':')[0], warning.reason.split(':')[1]?.trim()])).toEqual([
      ['policies/repo.yaml', lineOf(REPO, 'strict'), 'warning', 'strict'],
      ['policies/repo.yaml', lineOf(REPO, '  allow: ["read_file"'), 'warning', 'tools.allow'],
      ['policies/repo.yaml', lineOf(REPO, 'firstParty'), 'warning', 'trust.firstParty'],
      ['policies/repo.yaml', lineOf(REPO, 'maxTimeoutMs'), 'warning', 'limits.maxTimeoutMs'],
      ['policies/repo.yaml', lineOf(REPO, '  allow: ["api.github.com"'), 'warning', 'network.allow'],
    ]);
    expect(warnings.find((warning) => warning.reason.includes('tools.allow'))?.reason).toContain('"*"');
    expect(warnings.find((warning) => warning.reason.includes('tools.allow'))?.reason).not.toContain('"read_file"');
    expect(warnings.find((warning) => warning.reason.includes('network.allow'))?.reason).toContain('"evil.example"');
  });

  it('are none for a repository that only tightens, or with no organisation layer for keys other than trust', () => {
    const tight = workspaces.load({
      manifests: { 'a.yaml': manifestYaml('read_file') },
      organisation: { 'org.yaml': ORG },
      repository: { 'repo.yaml': policyYaml('repo', 'limits:\n  maxTimeoutMs: 1000\nnetwork:\n  allow: []\ntools:\n  allow: ["read_file"]') },
    });
    expect(ineffectiveRepositoryKeys(tight.policy.enforced)).toEqual([]);
    const alone = workspaces.load({ manifests: { 'a.yaml': manifestYaml('read_file') }, repository: { 'repo.yaml': policyYaml('repo', 'limits:\n  maxTimeoutMs: 60000') } });
    expect(ineffectiveRepositoryKeys(alone.policy.enforced)).toEqual([]);
  });
});
