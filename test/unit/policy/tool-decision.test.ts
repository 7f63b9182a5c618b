// readToolDecision() is the one answer: the view decides, an exclusion always denies
// (with the exclusion's rule and reason), the journal's view travels with it,
// and it is computed once per view.
import { describe, expect, it } from 'vitest';
import { denialError, readToolDecision } from '../../../src/policy/tool-decision.js';
import { manifestYaml, policyYaml, useTestWorkspaces } from '../../helpers/policy-workspace.js';

const workspaces = useTestWorkspaces();

describe('readToolDecision', () => {
  it('answers effect, code, rule and the journal view, once per view, without mutating it', () => {
    const workspace = workspaces.make({
      manifests: {
        'a.yaml': manifestYaml('reader'),
        'd.yaml': manifestYaml('deleter', { sideEffect: 'destructive' }),
        'x.yaml': manifestYaml('slow', { timeoutMs: 99_000 }),
        'n.yaml': manifestYaml('denied'),
      },
      repository: { 'r.yaml': policyYaml('r', 'tools:\n  deny: [denied]') },
    });
    const config = workspace.load();
    const table = [
      ['reader', { effect: 'allow', code: null, rule: null, reason: null, excluded: false, journal: { decision: 'allow', rule: null } }],
      ['deleter', { effect: 'ask', code: null, rule: '(built-in) sideEffects.requireApproval', journal: { decision: 'ask', rule: '(built-in) sideEffects.requireApproval' } }],
      [
        'slow',
        { effect: 'deny', code: 'policy_denied', rule: '(built-in) limits.maxTimeoutMs', excluded: true, journal: { decision: 'deny', rule: '(built-in) limits.maxTimeoutMs' } },
      ],
      ['denied', { effect: 'deny', code: 'policy_denied', rule: 'policies/r.yaml:4 tools.deny', excluded: false, journal: { decision: 'deny' } }],
    ] as const;
    for (const [name, expected] of table) {
      const view = config.tools.get(name)!;
      const before = JSON.stringify(view.decision);
      expect(readToolDecision(view)).toMatchObject(expected);
      expect(readToolDecision(view)).toBe(readToolDecision(view));
      expect(Object.isFrozen(readToolDecision(view))).toBe(true);
      expect(JSON.stringify(view.decision)).toBe(before);
    }
    // An exclusion's reason is the one the exclusion gives, and the refusal carries it.
    const slow = config.tools.get('slow')!;
    expect(readToolDecision(slow).reason).toBe(slow.exclusion?.reason);
    const error = denialError('slow', readToolDecision(slow));
    expect(error.code).toBe('policy_denied');
    expect(error.details).toEqual({ rule: '(built-in) limits.maxTimeoutMs', reason: slow.exclusion?.reason });
  });
});
