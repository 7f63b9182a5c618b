// Rules on arguments through a real host (SPEC section 4.1 and section 5 step
// 5): a deny rule refuses with policy_denied naming the rule, an ask rule sends
// an allowed call to approval, a rule that cannot be evaluated denies naming
// itself, shadow rules are journaled as would_deny, and the journal records the
// deciding rule. `explain` gives the same answer the host enforces.
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteJournal as Journal } from '../../../src/audit/sqlite/sqlite-journal.js';
import { explainTool } from '../../../src/cli/explain.js';
import { closeAllHosts, errorOf, startHost, textOf, type TestHost } from '../../helpers/supervisor-host.js';

afterAll(closeAllHosts);

const RULES = `rules:
  - name: no-workflows
    tools: ["echo"]
    when: 'has(args.value) && type(args.value) == string && path.within(args.value, ".github/**")'
    effect: deny
  - name: external-urls
    tools: ["echo"]
    when: 'type(args.value) == map && url.host(args.value.url) != "api.github.com"'
    effect: ask
  - name: counted
    tools: ["echo"]
    when: 'type(args.value) == list && args.value.exists(x, x == "rm")'
    effect: deny`;

async function recordOf(host: TestHost, callId: string) {
  await host.flushJournal();
  const journal = Journal.open(host.stateDir, { asHost: false });
  try {
    return journal.get(callId);
  } finally {
    journal.close();
  }
}

describe('rules on arguments in a real host', () => {
  it('allows what no rule matches, denies what a deny rule matches, naming it; the journal records the rule', async () => {
    const host = await startHost({ policy: RULES });
    expect(textOf(await host.call('echo', { value: 'docs/readme.md' }))).toBe('docs/readme.md');

    const denied = await host.call('echo', { value: 'docs/../.github/workflows/ci.yml' });
    const error = errorOf(denied);
    expect(error.code).toBe('policy_denied');
    expect(error.details['rule']).toMatch(/org\.yaml:\d+ rules\.no-workflows$/);
    expect(error.details['failure']).toBeUndefined();
    expect(await recordOf(host, denied.callId)).toMatchObject({ decision: 'deny', rule: error.details['rule'], status: 'denied', errorCode: 'policy_denied' });
  });

  it('a symbolic link in the workspace does not hide the protected folder', async () => {
    const host = await startHost({ policy: RULES });
    mkdirSync(join(host.workspace, '.github/workflows'), { recursive: true });
    symlinkSync('.github/workflows', join(host.workspace, 'wf'));
    const error = errorOf(await host.call('echo', { value: 'wf/ci.yml' }));
    expect(error.code).toBe('policy_denied');
    expect(error.details['rule']).toMatch(/rules\.no-workflows$/);
  });

  it('an ask rule makes an allowed call need approval, naming the rule', async () => {
    const host = await startHost({ policy: RULES });
    expect(textOf(await host.call('echo', { value: { url: 'https://api.github.com/repos' } }))).toContain('api.github.com');
    const asked = await host.call('echo', { value: { url: 'https://api.github.com@evil.test/' } });
    const error = errorOf(asked);
    expect(error.code).toBe('approval_required');
    expect(error.details['rule']).toMatch(/rules\.external-urls$/);
    expect(await recordOf(host, asked.callId)).toMatchObject({ decision: 'ask', rule: error.details['rule'] });
  });

  it('a rule that cannot be evaluated for a call denies, naming the rule and the failure', async () => {
    const host = await startHost({ policy: RULES });
    // external-urls reads args.value.url: a map without it cannot be judged.
    const missing = errorOf(await host.call('echo', { value: { other: 1 } }));
    expect(missing.code).toBe('policy_denied');
    expect(missing.details).toMatchObject({ rule: expect.stringMatching(/rules\.external-urls$/), failure: 'missing_argument' });
    const notUrl = errorOf(await host.call('echo', { value: { url: '/relative' } }));
    expect(notUrl.details).toMatchObject({ rule: expect.stringMatching(/rules\.external-urls$/), failure: 'helper_refused' });
  });

  it('a hostile list is refused by the cost limit before the rule runs', async () => {
    const host = await startHost({
      policy: `rules:\n  - name: pairs\n    tools: ["echo"]\n    when: 'type(args.value) == list && args.value.exists(a, args.value.exists(b, a == b + "!"))'\n    effect: deny`,
    });
    expect(textOf(await host.call('echo', { value: ['a', 'b'] }))).toContain('a');
    const error = errorOf(await host.call('echo', { value: Array.from({ length: 2_000 }, (_, i) => `v${i}`) }));
    expect(error.details).toMatchObject({ rule: expect.stringMatching(/rules\.pairs$/), failure: 'cost_limit' });
  });

  it('a shadow rule is journaled as would_deny and the call runs', async () => {
    const shadow = ['kind: Policy', 'name: trial', 'mode: shadow', 'rules:', '  - { name: trial-deny, tools: ["echo"], when: \'args.value == "x"\', effect: deny }', ''].join('\n');
    const host = await startHost({ extraPolicies: [shadow] });
    const outcome = await host.call('echo', { value: 'x' });
    expect(textOf(outcome)).toBe('x');
    expect(await recordOf(host, outcome.callId)).toMatchObject({ decision: 'would_deny', rule: expect.stringMatching(/extra-0\.yaml:5 rules\.trial-deny$/), status: 'completed' });
  });

  it('explain TOOL ARGS shows each rule, whether it matched, and the decision serve enforces', async () => {
    const host = await startHost({ policy: RULES });
    const view = host.config.tools.get('echo');
    if (!view) throw new Error('no echo');
    const explained = explainTool(host.config, view, { value: 'docs/../.github/x' });
    expect(explained.arguments).toMatchObject({ valid: true, outcome: 'deny', rule: expect.stringMatching(/rules\.no-workflows$/) });
    expect(explained.arguments?.rules.map((row) => [row.rule.replace(/^.*:(\d+) /, '$1 '), row.matched, row.failure])).toEqual([
      [expect.stringMatching(/^\d+ rules\.no-workflows$/), true, null],
      [expect.stringMatching(/^\d+ rules\.external-urls$/), false, null],
      [expect.stringMatching(/^\d+ rules\.counted$/), false, null],
    ]);
    const asked = explainTool(host.config, view, { value: { url: 'https://evil.test/' } });
    expect(asked.arguments).toMatchObject({ outcome: 'ask', rule: expect.stringMatching(/rules\.external-urls$/) });
    const broken = explainTool(host.config, view, { value: { nope: 1 } });
    expect(broken.arguments).toMatchObject({ outcome: 'deny' });
    expect(broken.arguments?.rules[1]).toMatchObject({ matched: null, failure: expect.stringMatching(/^missing_argument/) });
  });
});
