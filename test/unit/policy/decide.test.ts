// decide() is pure: the view decides, an exclusion always denies, and the shadow
// decision travels beside the enforced one.
import { describe, expect, it } from 'vitest';
import { decide, decideWithShadow } from '../../../src/policy/decide.js';
import { manifestYaml, policyYaml, useTestWorkspaces } from './workspace.js';

const workspaces = useTestWorkspaces();

describe('decide', () => {
  it('returns the same decision for any arguments, and never mutates the view', () => {
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
      ['reader', { effect: 'allow' }],
      ['deleter', { effect: 'ask', rule: '(built-in) sideEffects.requireApproval' }],
      ['slow', { effect: 'deny', code: 'policy_denied', rule: '(built-in) limits.maxTimeoutMs' }],
      ['denied', { effect: 'deny', code: 'policy_denied', rule: 'policies/r.yaml:4 tools.deny' }],
    ] as const;
    for (const [name, expected] of table) {
      const view = config.tools.get(name)!;
      const before = JSON.stringify(view.decision);
      expect(decide(view, {})).toMatchObject(expected);
      expect(decide(view, { path: 'anything' })).toEqual(decide(view, {}));
      expect(decideWithShadow(view, {})).toEqual({ decision: decide(view, {}) });
      expect(JSON.stringify(view.decision)).toBe(before);
    }
  });
});
