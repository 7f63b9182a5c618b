// Rules compile once at load: an expression that does not parse, names an
// unknown variable, field or function, is not a condition, or uses matches()
// is a problem at its file:line:col (validate refuses it, serve does not
// start). Rules apply by tool glob, class and principal, in layer order, and
// only tighten.
import { describe, expect, it } from 'vitest';
import { evaluateRules, traceRules } from '../../../../src/policy/rules/evaluate-rules.js';
import { compileExpression } from '../../../../src/policy/rules/compile-rules.js';
import { estimateCost, largestCollection, RULE_COST_LIMIT } from '../../../../src/policy/rules/rule-cost.js';
import { lineOf, manifestYaml, policyYaml, useTestWorkspaces } from '../../../helpers/policy-workspace.js';

const workspaces = useTestWorkspaces();

describe('validate refuses a rule that does not compile, at its file:line:col', () => {
  it.each([
    ['a syntax error', `'args.path == '`, 'args.path == '.length],
    ['an unknown variable', `'argz.path == "x"'`, 0],
    ['an unknown variable after other text', `'has(args.path) && secrets.x == 1'`, 'has(args.path) && '.length],
    ['an unknown field of tool', `'tool.nmae == "x"'`, 'tool.'.length],
    ['an unknown helper', `'path.inside(args.path, "x")'`, 0],
    ['a value that is not a condition', `'size(args)'`, 0],
    ['matches (backtracking regular expressions)', `'args.path.matches("^(a+)+$")'`, 0],
  ])('%s', (_what, when, offset) => {
    const repo = policyYaml('repo', `rules:\n  - name: r\n    tools: ["*"]\n    when: ${when}\n    effect: deny`);
    const config = workspaces.make({ manifests: { 't.yaml': manifestYaml('t') }, repository: { 'repo.yaml': repo } }).load();
    expect(config.problems).toHaveLength(1);
    const [problem] = config.problems;
    // The value starts after `    when: ` and a quote.
    expect(problem).toMatchObject({ file: 'policies/repo.yaml', line: lineOf(repo, 'when:'), col: '    when: '.length + 2 + offset });
    expect(problem?.reason).toMatch(/^rules\.r\.when: /);
  });

  it('a block scalar: the problem is on the line inside the block', () => {
    const repo = policyYaml('repo', `rules:\n  - name: r\n    tools: ["*"]\n    when: |\n      has(args.path) &&\n        nope == 1\n    effect: deny`);
    const config = workspaces.make({ manifests: { 't.yaml': manifestYaml('t') }, repository: { 'repo.yaml': repo } }).load();
    expect(config.problems).toEqual([expect.objectContaining({ line: lineOf(repo, 'nope == 1'), col: 9 })]);
  });

  it('two rules of one file with the same name', () => {
    const repo = policyYaml('repo', `rules:\n  - { name: r, tools: ["*"], when: 'true', effect: deny }\n  - { name: r, tools: ["*"], when: 'false', effect: ask }`);
    const config = workspaces.make({ manifests: { 't.yaml': manifestYaml('t') }, repository: { 'repo.yaml': repo } }).load();
    expect(config.problems).toEqual([expect.objectContaining({ line: 5, reason: expect.stringContaining('used twice') })]);
  });

  it('schema faults: a missing effect, an unknown key, a bad name', () => {
    const repo = policyYaml('repo', `rules:\n  - { name: "Bad Name", tools: ["*"], when: 'true', effct: deny }`);
    const config = workspaces.make({ manifests: { 't.yaml': manifestYaml('t') }, repository: { 'repo.yaml': repo } }).load();
    const reasons = config.problems.map((problem) => problem.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([expect.stringContaining('unknown key "effct"'), expect.stringContaining('missing required key "effect"'), expect.stringContaining('rules.0.name')]),
    );
  });
});

describe('which rules apply to a tool, and in which order they decide', () => {
  const ORG = policyYaml(
    'org',
    `rules:
  - name: org-ask-docs
    tools: ["w*"]
    when: 'path.within(args.path, "docs/**")'
    effect: ask
  - name: org-deny-git
    tools: ["*"]
    class: local_mutation
    when: 'path.within(args.path, ".git/**")'
    effect: deny`,
  );
  const REPO = policyYaml(
    'repo',
    `rules:
  - name: repo-deny-docs-secret
    tools: ["writer"]
    when: 'args.path.endsWith("secret.md")'
    effect: deny
  - name: ci-only
    tools: ["writer"]
    principals: ["ci-*"]
    when: 'true'
    effect: deny`,
  );

  function load() {
    return workspaces.load({
      manifests: { 'w.yaml': manifestYaml('writer', { sideEffect: 'local_mutation' }), 'r.yaml': manifestYaml('reader') },
      organisation: { 'org.yaml': ORG },
      repository: { 'repo.yaml': REPO },
    });
  }

  it('by tool glob and class: the reader (read_only) meets no rule, the writer all four', () => {
    const config = load();
    expect(config.tools.get('reader')?.rules).toBeUndefined();
    expect(config.tools.get('writer')?.rules?.rules.map((rule) => rule.name)).toEqual(['org-ask-docs', 'org-deny-git', 'repo-deny-docs-secret', 'ci-only']);
  });

  it('the strictest effect wins, named by the first such rule in layer order', () => {
    const scope = load().tools.get('writer')?.rules;
    if (!scope) throw new Error('no rules');
    const decide = (path: string, principal: string | null = null) => {
      const verdict = evaluateRules(scope, { path }, principal);
      return verdict.effect === 'allow' ? 'allow' : `${verdict.effect} ${verdict.rule.ref}`;
    };
    const org = `${workspaces.current()?.orgDir}/org.yaml`;
    expect(decide('src/a.ts')).toBe('allow');
    expect(decide('docs/a.md')).toBe(`ask ${org}:${lineOf(ORG, 'org-ask-docs')} rules.org-ask-docs`);
    // An ask of the organisation, a deny of the repository: the deny wins and is named.
    expect(decide('docs/secret.md')).toBe(`deny policies/repo.yaml:${lineOf(REPO, 'repo-deny-docs-secret')} rules.repo-deny-docs-secret`);
    expect(decide('docs/../.git/config')).toBe(`deny ${org}:${lineOf(ORG, 'org-deny-git')} rules.org-deny-git`);
    // principals: only HTTP callers whose name matches; stdio (null) never.
    expect(decide('src/a.ts', 'ci-bot')).toBe(`deny policies/repo.yaml:${lineOf(REPO, 'ci-only')} rules.ci-only`);
    expect(decide('src/a.ts', 'alice')).toBe('allow');
  });

  it('a rule that cannot be evaluated denies, naming itself and why', () => {
    const scope = load().tools.get('writer')?.rules;
    if (!scope) throw new Error('no rules');
    const missing = evaluateRules(scope, {}, null);
    expect(missing).toMatchObject({ effect: 'deny', rule: { name: 'org-ask-docs' }, failure: 'missing_argument' });
    const number = evaluateRules(scope, { path: 42 }, null);
    expect(number).toMatchObject({ effect: 'deny', failure: 'helper_refused' });
    const traced = traceRules(scope, { path: 'docs/a.md' }, null);
    expect(traced.map((trace) => [trace.rule.name, trace.applies, trace.matched])).toEqual([
      ['org-ask-docs', true, true],
      ['org-deny-git', true, false],
      ['repo-deny-docs-secret', true, false],
      ['ci-only', false, null],
    ]);
  });
});

describe('evaluation failures and the cost limit', () => {
  it('a missing argument and a type error fail closed', () => {
    const repo = policyYaml('repo', `rules:\n  - { name: big, tools: ["*"], when: 'args.count > 10', effect: deny }`);
    const scope = workspaces.load({ manifests: { 't.yaml': manifestYaml('t') }, repository: { 'repo.yaml': repo } }).tools.get('t')?.rules;
    if (!scope) throw new Error('no rules');
    expect(evaluateRules(scope, { count: 3 }, null)).toEqual({ effect: 'allow' });
    expect(evaluateRules(scope, { count: 30 }, null)).toMatchObject({ effect: 'deny' });
    expect(evaluateRules(scope, {}, null)).toMatchObject({ effect: 'deny', failure: 'missing_argument' });
    expect(evaluateRules(scope, { count: 'many' }, null)).toMatchObject({ effect: 'deny', failure: 'type_error' });
  });

  it('nested comprehensions over a large argument are refused before they run', () => {
    const repo = policyYaml('repo', `rules:\n  - { name: pairs, tools: ["*"], when: 'args.items.exists(a, args.items.exists(b, a == b + "x"))', effect: deny }`);
    const scope = workspaces.load({ manifests: { 't.yaml': manifestYaml('t') }, repository: { 'repo.yaml': repo } }).tools.get('t')?.rules;
    if (!scope) throw new Error('no rules');
    expect(evaluateRules(scope, { items: ['a', 'b'] }, null)).toEqual({ effect: 'allow' });
    const items = Array.from({ length: 5_000 }, (_, i) => `item${i}`);
    const started = performance.now();
    expect(evaluateRules(scope, { items }, null)).toMatchObject({ effect: 'deny', failure: 'cost_limit' });
    // Refused by the estimate: the 25 million comparisons never ran.
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('the estimate: size alone without comprehensions; size × largest^depth with them', () => {
    const flat = compileExpression('args.a == 1 && args.b == 2');
    const nested = compileExpression('args.l.exists(x, args.l.exists(y, x == y))');
    if (!flat.ok || !nested.ok) throw new Error('did not compile');
    expect(flat.shape.depth).toBe(0);
    expect(nested.shape.depth).toBe(2);
    expect(estimateCost(flat.shape, 1e9)).toBe(flat.shape.nodes);
    expect(estimateCost(nested.shape, 1000)).toBeGreaterThan(RULE_COST_LIMIT);
    expect(largestCollection({ a: [1, 2, 3], b: { c: [1, 2, 3, 4, 5] }, s: 'x'.repeat(50) }, false)).toBe(5);
    expect(largestCollection({ s: 'x'.repeat(50) }, true)).toBe(50);
  });
});
