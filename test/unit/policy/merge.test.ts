// One test per merge rule of SPEC section 4: the tightest value wins, never the
// order of files, and a repository file cannot loosen the organisation's.
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { POLICY_DEFAULTS } from '../../../src/policy/defaults.js';
import { lineOf, manifestYaml, policyYaml, useTestWorkspaces } from '../../helpers/policy-workspace.js';

const workspaces = useTestWorkspaces();
const load = workspaces.load;

function view(config: ReturnType<typeof load>, name: string) {
  const found = config.tools.get(name);
  if (!found) throw new Error(`no view for ${name}`);
  return found;
}

const ORG = 'org.yaml';

describe('no policy file', () => {
  it('applies the built-in baseline, every key sourced as (built-in)', () => {
    const config = load({ manifests: { 'a.yaml': manifestYaml('a'), 'd.yaml': manifestYaml('d', { sideEffect: 'destructive' }) } });
    const policy = config.policy.enforced;
    expect(policy.strict).toMatchObject({ value: true, source: { layer: 'built-in', rule: '(built-in) strict' } });
    expect(policy.limits.maxTimeoutMs.value).toBe(POLICY_DEFAULTS.limits.maxTimeoutMs);
    expect(config.session).toEqual({
      maxCallsPerSession: 1000,
      maxConcurrency: 8,
      maxConsecutiveFailures: 20,
      onUnknownTool: 'protocol_error',
      onInvalidArguments: 'error_result',
      secretNames: ['*_TOKEN', '*_KEY', '*SECRET*', '*PASSWORD*'],
      principalRules: [],
      approvalsBy: 'client',
      approvalExpireAfterMs: 3_600_000,
      journalArguments: 'none',
      policyDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(view(config, 'a').decision).toEqual({ effect: 'allow' });
    expect(view(config, 'd').decision).toMatchObject({ effect: 'ask', rule: '(built-in) sideEffects.requireApproval' });
  });
});

describe('journal.arguments: redacted wins, and the policy digest follows what is enforced', () => {
  it('a repository can ask the journal to keep redacted arguments; an organisation none does not undo it', () => {
    const org = policyYaml('org', 'journal:\n  arguments: none');
    const repo = policyYaml('repo', 'journal:\n  arguments: redacted');
    const config = load({ manifests: { 'a.yaml': manifestYaml('a') }, organisation: { [ORG]: org }, repository: { 'repo.yaml': repo } });
    expect(config.policy.enforced.journalArguments).toMatchObject({ value: 'redacted', source: { layer: 'repository' } });
    expect(config.session.journalArguments).toBe('redacted');
  });

  it('the digest changes with an enforced value, not with where a key is written', () => {
    const workspace = workspaces.make({ manifests: { 'a.yaml': manifestYaml('a') }, organisation: { [ORG]: policyYaml('org', '') } });
    // One workspace, its organisation file rewritten: the default roots (the workspace) stay the same.
    const digest = (text: string) => {
      writeFileSync(workspaces.current()?.orgFiles[0] as string, policyYaml('org', text));
      return workspace.load().session.policyDigest;
    };
    const base = digest('tools:\n  deny: [x, y]\nlimits:\n  maxConcurrency: 4');
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    // The same policy, keys and list items in another order, with a comment.
    expect(digest('# moved\nlimits:\n  maxConcurrency: 4\ntools:\n  deny: [y, x]')).toBe(base);
    expect(digest('tools:\n  deny: [x, y]\nlimits:\n  maxConcurrency: 5')).not.toBe(base);
    expect(digest('tools:\n  deny: [x]\nlimits:\n  maxConcurrency: 4')).not.toBe(base);
  });
});

describe('approvals: operator wins, the shorter expiry wins', () => {
  it('a repository cannot hand operator approvals back to the client, nor lengthen their life', () => {
    const org = policyYaml('org', 'approvals:\n  by: operator\n  expireAfterMs: 600000');
    const repo = policyYaml('repo', 'approvals:\n  by: client\n  expireAfterMs: 900000');
    const config = load({ manifests: { 'a.yaml': manifestYaml('a') }, organisation: { [ORG]: org }, repository: { 'repo.yaml': repo } });
    const policy = config.policy.enforced;
    expect(policy.approvalsBy).toMatchObject({ value: 'operator', source: { rule: `${workspaces.current()?.orgFiles[0]}:${lineOf(org, 'by:')} approvals.by` } });
    expect(policy.approvalsExpireAfterMs).toMatchObject({ value: 600_000 });
    expect(config.session).toMatchObject({ approvalsBy: 'operator', approvalExpireAfterMs: 600_000 });
  });

  it('a repository may tighten: operator and a shorter expiry', () => {
    const org = policyYaml('org', 'approvals:\n  expireAfterMs: 600000');
    const repo = policyYaml('repo', 'approvals:\n  by: operator\n  expireAfterMs: 1000');
    const config = load({ manifests: { 'a.yaml': manifestYaml('a') }, organisation: { [ORG]: org }, repository: { 'repo.yaml': repo } });
    expect(config.session).toMatchObject({ approvalsBy: 'operator', approvalExpireAfterMs: 1000 });
    expect(config.policy.enforced.approvalsExpireAfterMs.source.rule).toBe(`policies/repo.yaml:${lineOf(repo, 'expireAfterMs')} approvals.expireAfterMs`);
  });
});

describe('tools.deny: a match in any layer denies', () => {
  it('unions the deny lists and names the line of the matching pattern', () => {
    const org = policyYaml('org', 'tools:\n  deny: ["shell_*"]');
    const repo = policyYaml('repo', 'tools:\n  deny:\n    - other\n    - net_*');
    const config = load({
      manifests: { 'a.yaml': manifestYaml('shell_run'), 'b.yaml': manifestYaml('net_get'), 'c.yaml': manifestYaml('ok_tool') },
      organisation: { [ORG]: org },
      repository: { 'repo.yaml': repo },
    });
    expect(view(config, 'shell_run')).toMatchObject({
      listed: false,
      decision: { effect: 'deny', code: 'policy_denied', rule: `${workspaces.current()?.orgFiles[0]}:${lineOf(org, 'deny')} tools.deny` },
    });
    expect(view(config, 'net_get')).toMatchObject({
      listed: false,
      decision: { effect: 'deny', code: 'policy_denied', rule: `policies/repo.yaml:${lineOf(repo, 'net_*')} tools.deny` },
    });
    expect(view(config, 'ok_tool').listed).toBe(true);
  });
});

describe('tools.allow: layers intersect', () => {
  it('a repository allow-all cannot loosen the organisation allow list', () => {
    const org = policyYaml('org', 'tools:\n  allow: ["read_*"]');
    const config = load({
      manifests: { 'a.yaml': manifestYaml('read_a'), 'b.yaml': manifestYaml('write_b', { sideEffect: 'local_mutation' }) },
      organisation: { [ORG]: org },
      repository: { 'loosen.yaml': policyYaml('loosen', 'tools:\n  allow: ["*"]') },
    });
    expect(view(config, 'read_a').listed).toBe(true);
    expect(view(config, 'write_b')).toMatchObject({
      listed: false,
      decision: { effect: 'deny', code: 'policy_denied', rule: `${workspaces.current()?.orgFiles[0]}:${lineOf(org, 'allow')} tools.allow` },
    });
  });

  it('a repository allow list narrows the organisation one', () => {
    const repo = policyYaml('repo', 'tools:\n  allow: [read_a]');
    const config = load({
      manifests: { 'a.yaml': manifestYaml('read_a'), 'b.yaml': manifestYaml('read_b') },
      organisation: { [ORG]: policyYaml('org', 'tools:\n  allow: ["read_*"]') },
      repository: { 'repo.yaml': repo },
    });
    expect(view(config, 'read_a').listed).toBe(true);
    expect(view(config, 'read_b').decision).toMatchObject({ effect: 'deny', rule: `policies/repo.yaml:${lineOf(repo, 'allow')} tools.allow` });
  });
});

describe('sideEffects.deny: union', () => {
  it('denies a class named by any layer, even when another layer names none', () => {
    const repo = policyYaml('repo', 'sideEffects:\n  deny: [remote_mutation]');
    const config = load({
      manifests: { 'r.yaml': manifestYaml('remote', { sideEffect: 'remote_mutation' }), 'd.yaml': manifestYaml('deleter', { sideEffect: 'destructive' }) },
      organisation: { [ORG]: policyYaml('org', 'sideEffects:\n  deny: [destructive]') },
      repository: { 'repo.yaml': repo },
    });
    expect(view(config, 'remote')).toMatchObject({ listed: false, decision: { effect: 'deny', rule: `policies/repo.yaml:${lineOf(repo, 'deny')} sideEffects.deny` } });
    expect(view(config, 'deleter')).toMatchObject({ listed: false, decision: { effect: 'deny', code: 'policy_denied' } });
    expect(view(config, 'deleter').decision).toMatchObject({ rule: expect.stringMatching(/org\.yaml:\d+ sideEffects\.deny$/) });
  });
});

describe('sideEffects.requireApproval: union', () => {
  it('a repository that sets an empty list does not drop the organisation requirement', () => {
    const org = policyYaml('org', 'sideEffects:\n  requireApproval:\n    - remote_mutation');
    const config = load({
      manifests: { 'r.yaml': manifestYaml('remote', { sideEffect: 'remote_mutation' }), 'd.yaml': manifestYaml('deleter', { sideEffect: 'destructive' }) },
      organisation: { [ORG]: org },
      repository: { 'repo.yaml': policyYaml('repo', 'sideEffects:\n  requireApproval: []') },
    });
    expect(view(config, 'remote').decision).toEqual({
      effect: 'ask',
      rule: `${workspaces.current()?.orgFiles[0]}:${lineOf(org, '- remote_mutation')} sideEffects.requireApproval`,
      reason: 'remote_mutation calls need approval',
    });
    // Layers set the key, so the default [destructive] no longer applies.
    expect(view(config, 'deleter').decision).toEqual({ effect: 'allow' });
  });

  it('accumulates requirements from both layers', () => {
    const repo = policyYaml('repo', 'sideEffects:\n  requireApproval: [local_mutation]');
    const config = load({
      manifests: { 'w.yaml': manifestYaml('writer', { sideEffect: 'local_mutation' }), 'r.yaml': manifestYaml('remote', { sideEffect: 'remote_mutation' }) },
      organisation: { [ORG]: policyYaml('org', 'sideEffects:\n  requireApproval: [remote_mutation]') },
      repository: { 'repo.yaml': repo },
    });
    expect(view(config, 'writer').decision).toMatchObject({ effect: 'ask', rule: `policies/repo.yaml:${lineOf(repo, 'requireApproval')} sideEffects.requireApproval` });
    expect(view(config, 'remote').decision).toMatchObject({ effect: 'ask' });
  });
});

describe('strict: any layer makes it strict', () => {
  it('a repository strict: false does not relax the organisation', () => {
    const org = policyYaml('org', 'strict: true');
    const config = load({
      manifests: { 'u.yaml': manifestYaml('unclassified', { sideEffect: null }) },
      organisation: { [ORG]: org },
      repository: { 'repo.yaml': policyYaml('repo', 'strict: false') },
    });
    expect(view(config, 'unclassified')).toMatchObject({
      listed: false,
      decision: { effect: 'deny', code: 'unclassified_tool', rule: `${workspaces.current()?.orgFiles[0]}:${lineOf(org, 'strict')} strict` },
    });
  });

  it('not strict when every layer says so: an unclassified tool needs approval', () => {
    const repo = policyYaml('repo', 'strict: false');
    const config = load({ manifests: { 'u.yaml': manifestYaml('unclassified', { sideEffect: null }) }, repository: { 'repo.yaml': repo } });
    expect(view(config, 'unclassified')).toMatchObject({ listed: true, decision: { effect: 'ask', rule: `policies/repo.yaml:${lineOf(repo, 'strict')} strict` } });
  });
});

describe('limits: the smallest value wins', () => {
  it('a repository cannot raise the organisation maximum', () => {
    const org = policyYaml('org', 'limits:\n  maxTimeoutMs: 20000\n  maxConcurrency: 2\n  maxConsecutiveFailures: 5');
    const config = load({
      manifests: { 'a.yaml': manifestYaml('a', { timeoutMs: 25_000 }) },
      organisation: { [ORG]: org },
      repository: { 'loosen.yaml': policyYaml('loosen', 'limits:\n  maxTimeoutMs: 600000\n  maxConcurrency: 64\n  maxConsecutiveFailures: 50') },
    });
    const orgFile = workspaces.current()?.orgFiles[0];
    expect(config.policy.enforced.limits.maxTimeoutMs).toMatchObject({
      value: 20_000,
      source: { layer: 'organisation', rule: `${orgFile}:${lineOf(org, 'maxTimeoutMs')} limits.maxTimeoutMs` },
    });
    expect(config.session.maxConcurrency).toBe(2);
    // Tighten-only like every limit: the organisation's 5 holds against the repository's 50.
    expect(config.session.maxConsecutiveFailures).toBe(5);
    expect(config.policy.enforced.limits.maxConsecutiveFailures).toMatchObject({
      value: 5,
      source: { layer: 'organisation', rule: `${orgFile}:${lineOf(org, 'maxConsecutiveFailures')} limits.maxConsecutiveFailures` },
    });
    expect(view(config, 'a')).toMatchObject({ listed: false, exclusion: { rule: `${orgFile}:${lineOf(org, 'maxTimeoutMs')} limits.maxTimeoutMs` } });
  });

  it('a repository may lower a limit, and its line becomes the source', () => {
    const repo = policyYaml('repo', 'limits:\n  maxCallsPerSession: 10\n  maxResultBytes: 4096');
    const config = load({
      manifests: { 'a.yaml': manifestYaml('a') },
      organisation: { [ORG]: policyYaml('org', 'limits:\n  maxCallsPerSession: 100') },
      repository: { 'repo.yaml': repo },
    });
    expect(config.session.maxCallsPerSession).toBe(10);
    expect(config.policy.enforced.limits.maxCallsPerSession.source.rule).toBe(`policies/repo.yaml:${lineOf(repo, 'maxCallsPerSession')} limits.maxCallsPerSession`);
    expect(view(config, 'a').limits.maxResultBytes).toBe(4096);
  });
});

describe('sandbox.community: layers intersect', () => {
  it('only modes every layer allows remain for community tools', () => {
    const repo = policyYaml('repo', 'sandbox:\n  community: [isolate, process_namespace]');
    const config = load({
      manifests: { 'community/w.yaml': manifestYaml('worker_tool', { mode: 'worker' }), 'community/i.yaml': manifestYaml('isolate_tool') },
      organisation: { [ORG]: policyYaml('org', 'sandbox:\n  community: [isolate, worker]') },
      repository: { 'repo.yaml': repo },
    });
    expect(view(config, 'isolate_tool')).toMatchObject({ listed: true, trust: 'community', allowedModes: ['isolate'] });
    expect(view(config, 'worker_tool')).toMatchObject({
      listed: false,
      exclusion: { rule: `policies/repo.yaml:${lineOf(repo, 'community')} sandbox.community` },
    });
  });
});

describe('workspace.allowedRoots: a root must lie inside the allowed roots of every layer', () => {
  it('a repository narrowing to docs/ excludes a tool rooted at the whole workspace', () => {
    const repo = policyYaml('repo', 'workspace:\n  allowedRoots: ["${WORKSPACE}/docs"]');
    const config = load({
      manifests: {
        'all.yaml': manifestYaml('all_files', { roots: [{ path: '${WORKSPACE}', access: 'read' }] }),
        'docs.yaml': manifestYaml('docs_only', { roots: [{ path: '${WORKSPACE}/docs', access: 'read' }] }),
      },
      files: { 'docs/readme.md': '# docs\n' },
      organisation: { [ORG]: policyYaml('org', 'workspace:\n  allowedRoots: ["${WORKSPACE}"]') },
      repository: { 'repo.yaml': repo },
    });
    expect(view(config, 'docs_only').listed).toBe(true);
    expect(view(config, 'all_files')).toMatchObject({ listed: false, exclusion: { rule: `policies/repo.yaml:${lineOf(repo, 'allowedRoots')} workspace.allowedRoots` } });
  });

  it('a repository cannot widen the organisation roots to the whole disk', () => {
    const org = policyYaml('org', 'workspace:\n  allowedRoots: ["${WORKSPACE}/docs"]');
    const config = load({
      manifests: { 'all.yaml': manifestYaml('all_files', { roots: [{ path: '${WORKSPACE}', access: 'read' }] }) },
      files: { 'docs/readme.md': '# docs\n' },
      organisation: { [ORG]: org },
      repository: { 'repo.yaml': policyYaml('repo', 'workspace:\n  allowedRoots: ["/"]') },
    });
    expect(view(config, 'all_files').exclusion?.rule).toBe(`${workspaces.current()?.orgFiles[0]}:${lineOf(org, 'allowedRoots')} workspace.allowedRoots`);
  });
});

describe('network.allow: layers intersect', () => {
  it('a host must be allowed by every layer that sets the key', () => {
    const repo = policyYaml('repo', 'network:\n  allow: [api.github.com, example.org]');
    const org = policyYaml('org', 'network:\n  allow: ["api.github.com"]');
    const config = load({
      manifests: { 'g.yaml': manifestYaml('github', { network: ['api.github.com'] }), 'e.yaml': manifestYaml('example', { network: ['example.org'] }) },
      organisation: { [ORG]: org },
      repository: { 'repo.yaml': repo },
    });
    expect(view(config, 'github').listed).toBe(true);
    expect(view(config, 'github').runSpec?.networkAllow).toEqual(['api.github.com']);
    expect(view(config, 'example')).toMatchObject({ listed: false, exclusion: { rule: `${workspaces.current()?.orgFiles[0]}:${lineOf(org, 'allow')} network.allow` } });
  });
});

describe('env: allow intersects, secrets accumulate', () => {
  it('a name must be allowed by every layer; a secret from any layer wins over allow', () => {
    const org = policyYaml('org', 'env:\n  allow: [PATH, LANG, MY_API_TOKEN, HOME]\n  secrets: ["*_TOKEN"]');
    const repo = policyYaml('repo', 'env:\n  allow: [PATH, LANG, MY_API_TOKEN, DEPLOY_CONF]\n  secrets: ["DEPLOY_*"]');
    const config = load(
      {
        manifests: {
          'ok.yaml': manifestYaml('ok_env', { mode: 'process', env: ['PATH', 'LANG'] }),
          'home.yaml': manifestYaml('home_env', { mode: 'process', env: ['HOME'] }),
          'tok.yaml': manifestYaml('token_env', { mode: 'process', env: ['MY_API_TOKEN'] }),
          'dep.yaml': manifestYaml('deploy_env', { mode: 'process', env: ['DEPLOY_CONF'] }),
        },
        organisation: { [ORG]: org },
        repository: { 'repo.yaml': repo },
      },
      { PATH: '/usr/bin', LANG: 'C.UTF-8', MY_API_TOKEN: 'tok-123456', DEPLOY_CONF: 'x', HOME: '/root' },
    );
    expect(view(config, 'ok_env').runSpec?.env).toEqual({ PATH: '/usr/bin', LANG: 'C.UTF-8' });
    expect(view(config, 'home_env').exclusion?.rule).toBe(`policies/repo.yaml:${lineOf(repo, 'allow')} env.allow`);
    expect(view(config, 'token_env').exclusion?.rule).toBe(`${workspaces.current()?.orgFiles[0]}:${lineOf(org, 'secrets')} env.secrets`);
    expect(view(config, 'deploy_env').exclusion?.rule).toBe(`policies/repo.yaml:${lineOf(repo, 'secrets')} env.secrets`);
    expect(config.session.secretNames).toEqual(['*_TOKEN', 'DEPLOY_*']);
    expect(config.secretValues()).toEqual(['tok-123456', 'x']);
  });
});

describe('trust.firstParty: first party only if every layer that sets it says so', () => {
  it('a repository cannot make a tool first party that the organisation does not', () => {
    const org = policyYaml('org', 'trust:\n  firstParty: ["manifests/internal/**"]');
    const config = load({
      manifests: { 'internal/a.yaml': manifestYaml('internal_tool', { mode: 'worker' }), 'b.yaml': manifestYaml('top_tool', { mode: 'worker' }) },
      organisation: { [ORG]: org },
      repository: { 'repo.yaml': policyYaml('repo', 'trust:\n  firstParty: ["manifests/**"]') },
    });
    expect(view(config, 'internal_tool')).toMatchObject({ trust: 'first_party', listed: true, allowedModes: ['isolate', 'worker', 'process', 'process_namespace'] });
    expect(view(config, 'top_tool')).toMatchObject({ trust: 'community', listed: false });
    expect(config.policy.assessments.get('top_tool')?.checks.find((check) => check.key === 'trust.firstParty')?.rule).toBe(
      `${workspaces.current()?.orgFiles[0]}:${lineOf(org, 'firstParty')} trust.firstParty`,
    );
  });

  it('nothing is first party by default', () => {
    const config = load({ manifests: { 'a.yaml': manifestYaml('a') } });
    expect(view(config, 'a').trust).toBe('community');
  });

  it.each([
    ['no organisation policy', {}],
    ['an organisation policy that does not set it', { [ORG]: policyYaml('org', 'limits:\n  maxTimeoutMs: 20000') }],
  ])('a repository layer alone grants nothing (%s): the built-in default is in force', (_name, organisation) => {
    const config = load({
      manifests: { 'a.yaml': manifestYaml('worker_tool', { mode: 'worker' }) },
      organisation,
      repository: { 'open.yaml': policyYaml('open', 'trust:\n  firstParty: ["**"]') },
    });
    expect(view(config, 'worker_tool')).toMatchObject({ trust: 'community', listed: false, allowedModes: ['isolate', 'process_namespace'] });
    expect(config.policy.assessments.get('worker_tool')?.checks.find((check) => check.key === 'trust.firstParty')?.rule).toBe('(built-in) trust.firstParty');
  });

  it('a repository layer narrows what the organisation granted', () => {
    const org = policyYaml('org', 'trust:\n  firstParty: ["manifests/**"]');
    const config = load({
      manifests: { 'internal/a.yaml': manifestYaml('internal_tool', { mode: 'worker' }), 'b.yaml': manifestYaml('top_tool', { mode: 'worker' }) },
      organisation: { [ORG]: org },
      repository: { 'repo.yaml': policyYaml('repo', 'trust:\n  firstParty: ["manifests/internal/**"]') },
    });
    expect(view(config, 'internal_tool').trust).toBe('first_party');
    expect(view(config, 'top_tool').trust).toBe('community');
  });
});

describe('onUnknownTool and onInvalidArguments: the tightest value wins', () => {
  it('protocol_error beats error_result beats rewrite, whatever the order', () => {
    const repo = policyYaml('repo', 'onUnknownTool: protocol_error\nonInvalidArguments: protocol_error');
    const config = load({
      manifests: { 'a.yaml': manifestYaml('a') },
      organisation: { [ORG]: policyYaml('org', 'onUnknownTool: {rewrite: a}\nonInvalidArguments: error_result') },
      repository: { 'repo.yaml': repo },
    });
    expect(config.session.onUnknownTool).toBe('protocol_error');
    expect(config.session.onInvalidArguments).toBe('protocol_error');
    expect(config.policy.enforced.onUnknownTool.source.rule).toBe(`policies/repo.yaml:${lineOf(repo, 'onUnknownTool')} onUnknownTool`);
  });

  it('error_result beats a rewrite', () => {
    const config = load({
      manifests: { 'a.yaml': manifestYaml('a') },
      organisation: { [ORG]: policyYaml('org', 'onUnknownTool: error_result') },
      repository: { 'repo.yaml': policyYaml('repo', 'onUnknownTool:\n  rewrite: a') },
    });
    expect(config.session.onUnknownTool).toBe('error_result');
  });

  it('a rewrite to a loaded tool applies when it is the only setting', () => {
    const config = load({ manifests: { 'a.yaml': manifestYaml('a') }, repository: { 'repo.yaml': policyYaml('repo', 'onUnknownTool: {rewrite: a}') } });
    expect(config.session.onUnknownTool).toEqual({ rewrite: 'a' });
  });

  it('two layers rewriting to different tools is a problem in both files', () => {
    const workspace = workspaces.make({
      manifests: { 'a.yaml': manifestYaml('a'), 'b.yaml': manifestYaml('b') },
      organisation: { [ORG]: policyYaml('org', 'onUnknownTool: {rewrite: a}') },
      repository: { 'repo.yaml': policyYaml('repo', 'onUnknownTool: {rewrite: b}') },
    });
    const problems = workspace.load().problems;
    expect(problems.map((problem) => [problem.file, problem.line])).toEqual([
      [workspace.orgFiles[0], 3],
      ['policies/repo.yaml', 3],
    ]);
  });

  it('a rewrite to a tool that is not loaded is a problem', () => {
    const workspace = workspaces.make({ manifests: { 'a.yaml': manifestYaml('a') }, repository: { 'repo.yaml': policyYaml('repo', 'onUnknownTool: {rewrite: nowhere}') } });
    expect(workspace.load().problems).toMatchObject([{ file: 'policies/repo.yaml', line: 3, col: 16 }]);
  });
});

describe('never by order', () => {
  it('swapping two organisation files changes no value in force', () => {
    const strictOne = policyYaml('one', 'limits:\n  maxTimeoutMs: 5000\nsideEffects:\n  deny: [destructive]\ntools:\n  allow: ["a*"]');
    const looseOne = policyYaml('two', 'limits:\n  maxTimeoutMs: 50000\nsideEffects:\n  deny: []\ntools:\n  allow: ["*"]');
    const manifests = { 'a.yaml': manifestYaml('alpha', { timeoutMs: 6000 }), 'b.yaml': manifestYaml('beta'), 'd.yaml': manifestYaml('adelete', { sideEffect: 'destructive' }) };
    const first = load({ manifests, organisation: { '1.yaml': strictOne, '2.yaml': looseOne } });
    const firstViews = [...first.tools.values()].map((v) => [v.manifest.name, v.listed, v.decision.effect]);
    workspaces.current()?.cleanup();
    const second = load({ manifests, organisation: { '1.yaml': looseOne, '2.yaml': strictOne } });
    const secondViews = [...second.tools.values()].map((v) => [v.manifest.name, v.listed, v.decision.effect]);
    expect(firstViews).toEqual([
      ['adelete', false, 'deny'],
      ['alpha', false, 'deny'],
      ['beta', false, 'deny'],
    ]);
    expect(secondViews).toEqual(firstViews);
    expect(second.policy.enforced.limits.maxTimeoutMs.value).toBe(5000);
  });
});
