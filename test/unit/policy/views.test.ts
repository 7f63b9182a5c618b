// The effective view of a tool: each kind of exclusion (SPEC section 4, first
// kind of refusal) with the manifest position and the rule, denial by name and
// by class, strict mode, approval, limits, the RunSpec and shadow mode.
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLOOD_CAP_BYTES } from '../../../src/registry/result-limits.js';
import { readToolDecision } from '../../../src/policy/tool-decision.js';
import { lineOf, manifestYaml, policyYaml, type ManifestOptions, useTestWorkspaces } from '../../helpers/policy-workspace.js';

const workspaces = useTestWorkspaces();
const load = workspaces.load;

const REPO = policyYaml(
  'repo',
  `
trust:
  firstParty: ["manifests/first/**"]
limits:
  maxTimeoutMs: 10000
  maxMemoryMb: 128
  maxResultBytes: 65536
network:
  allow: ["api.github.com", "*.example.org:443"]
env:
  allow: [PATH, LANG, GITHUB_TOKEN]
`,
);

interface ExclusionCase {
  readonly kind: string;
  readonly options: ManifestOptions;
  readonly file?: string;
  /** The rule, by the key written in REPO (or a built-in rule). */
  readonly rule: string;
  /** Text in the manifest line the problem must point at. */
  readonly manifestNeedle: string;
}

const EXCLUSIONS: readonly ExclusionCase[] = [
  {
    kind: 'timeout above maxTimeoutMs',
    options: { timeoutMs: 20_000 },
    rule: `policies/repo.yaml:${lineOf(REPO, 'maxTimeoutMs')} limits.maxTimeoutMs`,
    manifestNeedle: 'timeoutMs',
  },
  { kind: 'memoryMb above maxMemoryMb', options: { memoryMb: 256 }, rule: `policies/repo.yaml:${lineOf(REPO, 'maxMemoryMb')} limits.maxMemoryMb`, manifestNeedle: 'memoryMb' },
  {
    kind: 'maxResultBytes above the policy',
    options: { maxResultBytes: 1_000_000 },
    rule: `policies/repo.yaml:${lineOf(REPO, 'maxResultBytes')} limits.maxResultBytes`,
    manifestNeedle: 'maxResultBytes',
  },
  { kind: 'community worker', options: { mode: 'worker' }, rule: '(built-in) sandbox.community', manifestNeedle: 'mode: worker' },
  { kind: 'community process without namespace', options: { mode: 'process', isolation: 'none' }, rule: '(built-in) sandbox.community', manifestNeedle: 'mode: process' },
  { kind: 'root outside allowedRoots', options: { roots: [{ path: '/etc', access: 'read' }] }, rule: '(built-in) workspace.allowedRoots', manifestNeedle: 'path: "/etc"' },
  { kind: 'env name not allowed', options: { mode: 'process', env: ['HOME'] }, rule: `policies/repo.yaml:${lineOf(REPO, 'allow: [PATH')} env.allow`, manifestNeedle: 'env:' },
  { kind: 'env name that is a secret (allowed too)', options: { mode: 'process', env: ['GITHUB_TOKEN'] }, rule: '(built-in) env.secrets', manifestNeedle: 'env:' },
  {
    kind: 'network host not allowed',
    options: { network: ['evil.example.com'] },
    rule: `policies/repo.yaml:${lineOf(REPO, 'api.github.com')} network.allow`,
    manifestNeedle: 'allow:',
  },
  {
    kind: 'network port not allowed',
    options: { network: ['www.example.org:8080'] },
    rule: `policies/repo.yaml:${lineOf(REPO, 'api.github.com')} network.allow`,
    manifestNeedle: 'allow:',
  },
];

describe('exclusion: a tool that conflicts with the policy as declared', () => {
  it.each(EXCLUSIONS)('$kind → not listed, policy_denied naming the rule, problem at the manifest key', ({ options, rule, manifestNeedle }) => {
    const yaml = manifestYaml('conflicted', options);
    const config = load({ manifests: { 'community/conflicted.yaml': yaml }, repository: { 'repo.yaml': REPO } });
    const view = config.tools.get('conflicted');
    expect(view).toMatchObject({ listed: false, exclusion: { rule }, decision: { effect: 'deny', code: 'policy_denied', rule } });
    expect(view?.runSpec).toBeUndefined();
    expect(readToolDecision(view!)).toMatchObject({ effect: 'deny', code: 'policy_denied', rule });
    expect(config.exclusions).toHaveLength(1);
    expect(config.exclusions[0]).toMatchObject({ file: 'manifests/community/conflicted.yaml', line: lineOf(yaml, manifestNeedle) });
    expect(config.exclusions[0]?.reason).toContain(rule);
  });

  it('reports every conflict of one tool, the first decides', () => {
    const yaml = manifestYaml('greedy', { timeoutMs: 20_000, memoryMb: 512, network: ['evil.example.com'] });
    const config = load({ manifests: { 'greedy.yaml': yaml }, repository: { 'repo.yaml': REPO } });
    expect(config.exclusions.map((problem) => problem.line)).toEqual([lineOf(yaml, 'timeoutMs'), lineOf(yaml, 'memoryMb'), lineOf(yaml, 'allow:')]);
    expect(config.tools.get('greedy')?.exclusion?.rule).toBe(`policies/repo.yaml:${lineOf(REPO, 'maxTimeoutMs')} limits.maxTimeoutMs`);
  });

  it('a root that is a symlink out of the allowed roots is excluded (the resolved path counts)', () => {
    const workspace = workspaces.make({ manifests: { 'l.yaml': manifestYaml('linked', { roots: [{ path: '${WORKSPACE}/escape', access: 'read' }] }) } });
    symlinkSync('/etc', join(workspace.dir, 'escape'));
    const config = workspace.load();
    expect(config.problems).toEqual([]);
    expect(config.tools.get('linked')).toMatchObject({ listed: false, exclusion: { rule: '(built-in) workspace.allowedRoots' } });
  });

  it('relative allowedRoots are relative to the workspace', () => {
    const repo = policyYaml('repo', 'workspace:\n  allowedRoots: [docs]');
    const config = load({
      manifests: {
        'd.yaml': manifestYaml('docs_only', { roots: [{ path: '${WORKSPACE}/docs/api', access: 'read' }] }),
        's.yaml': manifestYaml('src_too', { roots: [{ path: '${WORKSPACE}/src', access: 'read' }] }),
      },
      files: { 'docs/api/index.md': '# api\n', 'src/a.ts': '\n' },
      repository: { 'repo.yaml': repo },
    });
    expect(config.tools.get('docs_only')?.listed).toBe(true);
    expect(config.tools.get('src_too')?.exclusion?.rule).toBe(`policies/repo.yaml:${lineOf(repo, 'allowedRoots')} workspace.allowedRoots`);
  });

  it('a first-party worker tool is not excluded by sandbox.community', () => {
    // First party is granted by an organisation layer (the repository's list only narrows it).
    const org = policyYaml('org', 'trust:\n  firstParty: ["manifests/**"]');
    const config = load({ manifests: { 'first/w.yaml': manifestYaml('worker_tool', { mode: 'worker' }) }, organisation: { 'org.yaml': org }, repository: { 'repo.yaml': REPO } });
    expect(config.tools.get('worker_tool')).toMatchObject({ listed: true, trust: 'first_party', decision: { effect: 'allow' } });
    expect(config.exclusions).toEqual([]);
  });
});

describe('denial by name and by class', () => {
  it('tools.deny and sideEffects.deny: not listed, policy_denied naming the rule, not an exclusion', () => {
    const repo = policyYaml('repo', 'tools:\n  deny: ["danger_*"]\nsideEffects:\n  deny: [remote_mutation]');
    const config = load({
      manifests: { 'a.yaml': manifestYaml('danger_zone'), 'b.yaml': manifestYaml('poster', { sideEffect: 'remote_mutation' }) },
      repository: { 'repo.yaml': repo },
    });
    expect(config.tools.get('danger_zone')).toMatchObject({
      listed: false,
      decision: { effect: 'deny', code: 'policy_denied', rule: `policies/repo.yaml:${lineOf(repo, 'danger_*')} tools.deny` },
    });
    expect(config.tools.get('poster')).toMatchObject({
      listed: false,
      decision: { effect: 'deny', code: 'policy_denied', rule: `policies/repo.yaml:${lineOf(repo, 'remote_mutation')} sideEffects.deny` },
    });
    expect(config.tools.get('danger_zone')?.exclusion).toBeUndefined();
    expect(config.exclusions).toEqual([]);
  });

  it('an unclassified tool under the default strict policy is denied with unclassified_tool', () => {
    const config = load({ manifests: { 'u.yaml': manifestYaml('mystery', { sideEffect: null }) } });
    expect(config.tools.get('mystery')).toMatchObject({ listed: false, decision: { effect: 'deny', code: 'unclassified_tool', rule: '(built-in) strict' } });
  });
});

describe('approval', () => {
  it('a manifest with approval: always asks, naming the manifest line', () => {
    const yaml = manifestYaml('careful', { approval: 'always' });
    const config = load({ manifests: { 'c.yaml': yaml } });
    expect(config.tools.get('careful')).toMatchObject({ listed: true, decision: { effect: 'ask', rule: `manifests/c.yaml:${lineOf(yaml, 'approval')} approval` } });
  });
});

describe('effective limits and RunSpec', () => {
  it('memoryMb defaults per mode, capped by maxMemoryMb; maxResultBytes falls back to the policy', () => {
    const repo = policyYaml('repo', 'limits:\n  maxMemoryMb: 100\n  maxResultBytes: 5000\ntrust:\n  firstParty: ["manifests/**"]');
    const config = load({
      manifests: {
        'i.yaml': manifestYaml('iso', {}),
        'w.yaml': manifestYaml('wrk', { mode: 'worker' }),
        'p.yaml': manifestYaml('proc', { mode: 'process' }),
        'r.yaml': manifestYaml('small', { maxResultBytes: 100, memoryMb: 32, timeoutMs: 1234 }),
      },
      repository: { 'repo.yaml': repo },
    });
    expect(config.tools.get('iso')?.limits).toEqual({ timeoutMs: 1000, maxResultBytes: 5000, memoryMb: 64 });
    expect(config.tools.get('wrk')?.limits.memoryMb).toBe(100);
    expect(config.tools.get('proc')?.limits.memoryMb).toBe(100);
    expect(config.tools.get('small')?.limits).toEqual({ timeoutMs: 1234, maxResultBytes: 100, memoryMb: 32 });
    expect(config.tools.get('proc')?.runSpec).toMatchObject({ mode: 'process', memoryMb: 100, isolation: 'namespace', floodCapBytes: FLOOD_CAP_BYTES });
  });

  it('the RunSpec passes only allowed, non-secret names present in the host environment', () => {
    const config = load(
      {
        manifests: {
          'p.yaml': manifestYaml('proc', { mode: 'process', sideEffect: 'local_mutation', env: ['PATH', 'LANG', 'TZ'], roots: [{ path: '${WORKSPACE}', access: 'read_write' }] }),
        },
      },
      { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', OTHER: 'not asked for', API_KEY: 'k-999999' },
    );
    const spec = config.tools.get('proc')?.runSpec;
    expect(spec?.env).toEqual({ PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' });
    expect(spec?.roots).toEqual([{ path: workspaces.current()?.dir, access: 'read_write' }]);
    expect(spec?.command).toEqual(['python3', '-c', 'print(1)']);
    expect(config.secretValues()).toEqual(['k-999999']);
  });

  it('views are frozen', () => {
    const config = load({ manifests: { 'a.yaml': manifestYaml('a') } });
    const view = config.tools.get('a');
    expect(Object.isFrozen(view)).toBe(true);
    expect(Object.isFrozen(view?.runSpec)).toBe(true);
  });
});

describe('shadow mode', () => {
  it('what a shadow organisation file would deny is allowed and recorded with its rule', () => {
    const shadow = policyYaml('trial', 'mode: shadow\nsideEffects:\n  deny: [destructive]\nlimits:\n  maxTimeoutMs: 500');
    const config = load({
      manifests: { 'd.yaml': manifestYaml('deleter', { sideEffect: 'destructive' }), 'r.yaml': manifestYaml('reader') },
      organisation: { 'trial.yaml': shadow },
    });
    const orgFile = workspaces.current()?.orgFiles[0];
    const deleter = config.tools.get('deleter');
    expect(deleter).toMatchObject({
      listed: true,
      decision: { effect: 'ask', rule: '(built-in) sideEffects.requireApproval' },
      shadowDecision: { effect: 'deny', code: 'policy_denied', rule: `${orgFile}:${lineOf(shadow, 'maxTimeoutMs')} limits.maxTimeoutMs` },
    });
    expect(readToolDecision(deleter!)).toMatchObject({
      effect: 'ask',
      shadow: { effect: 'deny' },
      journal: { decision: 'would_deny', rule: `${orgFile}:${lineOf(shadow, 'maxTimeoutMs')} limits.maxTimeoutMs` },
    });
    // Shadow exclusions are reported apart and never fail validate.
    expect(config.exclusions).toEqual([]);
    expect(config.shadowExclusions).toHaveLength(2);
    expect(config.shadowExclusions[0]?.reason).toMatch(/^warning \(shadow, not enforced\)/);
    expect(config.policy.enforced.limits.maxTimeoutMs.value).toBe(30_000);
    expect(config.policy.withShadow?.limits.maxTimeoutMs.value).toBe(500);
  });

  it('a shadow file that would deny by class only records the class rule', () => {
    const shadow = policyYaml('trial', 'mode: shadow\nsideEffects:\n  deny: [destructive]');
    const config = load({
      manifests: { 'd.yaml': manifestYaml('deleter', { sideEffect: 'destructive' }), 'r.yaml': manifestYaml('reader') },
      organisation: { 'trial.yaml': shadow },
    });
    expect(config.tools.get('deleter')?.shadowDecision).toEqual({
      effect: 'deny',
      code: 'policy_denied',
      rule: `${workspaces.current()?.orgFiles[0]}:${lineOf(shadow, 'deny:')} sideEffects.deny`,
      reason: 'destructive tools are denied',
    });
    expect(config.tools.get('reader')?.shadowDecision).toBeUndefined();
  });
});
