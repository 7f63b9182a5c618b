// Stages before the run: session limits, lookup, exposure, argument
// validation, policy (shadow) — each code with its details, and a journal
// record for every refusal.
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteJournal as Journal } from '../../../src/audit/sqlite/sqlite-journal.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { closeAllHosts, errorOf, resultOf, startHost, textOf } from '../../helpers/supervisor-host.js';

afterAll(closeAllHosts);

const LISTED = ['counter', 'dangerous', 'echo', 'emit', 'fail', 'barrier', 'greet', 'ledger', 'node_info', 'progress', 'spin', 'typed'].sort();

describe('lookup and exposure', () => {
  it('lists the exposed tools in name order with annotations from the enforced class', async () => {
    const host = await startHost();
    const tools = host.supervisor.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(LISTED);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('echo')?.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(byName.get('dangerous')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(byName.get('typed')?.outputSchema).toMatchObject({ type: 'object', required: ['ok'] });
  });

  it('refuses an unknown tool with unknown_tool and the available names', async () => {
    const host = await startHost();
    const error = errorOf(await host.call('no_such_tool', {}));
    expect(error.code).toBe('unknown_tool');
    expect(error.details).toEqual({ available: LISTED });
  });

  it('rewrites an unknown tool to the tool onUnknownTool names', async () => {
    const host = await startHost({ policy: 'onUnknownTool: { rewrite: echo }' });
    expect(textOf(await host.call('no_such_tool', { value: 'rewritten' }))).toBe('rewritten');
    expect(host.supervisor.session.onUnknownTool).toEqual({ rewrite: 'echo' });
  });

  it('refuses a tool denied by name with policy_denied naming the rule', async () => {
    const host = await startHost();
    const error = errorOf(await host.call('forbidden', {}));
    expect(error.code).toBe('policy_denied');
    expect(error.details['rule']).toMatch(/org\.yaml:\d+ tools\.deny$/);
    expect(error.message).toContain(String(error.details['rule']));
  });

  it('refuses an excluded tool (limits above the policy) with policy_denied naming the rule', async () => {
    const host = await startHost();
    const error = errorOf(await host.call('greedy', {}));
    expect(error.code).toBe('policy_denied');
    expect(error.details['rule']).toMatch(/maxTimeoutMs/);
    expect(error.message).toContain(String(error.details['rule']));
  });

  it('refuses an unclassified tool under the strict default with unclassified_tool', async () => {
    const host = await startHost();
    const error = errorOf(await host.call('unclassified', {}));
    expect(error.code).toBe('unclassified_tool');
    expect(typeof error.details['rule']).toBe('string');
  });
});

describe('session limits', () => {
  it('refuses calls beyond maxCallsPerSession with call_limit', async () => {
    const host = await startHost({ policy: 'limits:\n  maxCallsPerSession: 2' });
    resultOf(await host.call('echo', { value: 1 }));
    resultOf(await host.call('echo', { value: 2 }));
    const error = errorOf(await host.call('echo', { value: 3 }));
    expect(error.code).toBe('call_limit');
    expect(error.details).toEqual({ limit: 2 });
  });

  it('refuses an already-cancelled request with cancelled, without spending the budget', async () => {
    const host = await startHost({ policy: 'limits:\n  maxCallsPerSession: 1' });
    expect(errorOf(await host.call('echo', { value: 1 }, { control: new CallControl([AbortSignal.abort()]) })).code).toBe('cancelled');
    resultOf(await host.call('echo', { value: 1 }));
  });
});

describe('argument validation', () => {
  it.each([
    [{}, { path: '/name', keyword: 'required', expected: { type: 'string', maxLength: 50 } }],
    [{ name: 5 }, { path: '/name', keyword: 'type', expected: { type: 'string', maxLength: 50 } }],
    [{ name: 'a'.repeat(51) }, { path: '/name', keyword: 'maxLength', expected: { type: 'string', maxLength: 50 } }],
    [
      { name: 'x', times: 0 },
      { path: '/times', keyword: 'minimum', expected: { type: 'integer', minimum: 1 } },
    ],
    [
      { name: 'x', extra: true },
      { path: '/extra', keyword: 'additionalProperties', expected: false },
    ],
    [[1, 2], { path: '', keyword: 'type', expected: { type: 'object' } }],
    ['text', { path: '', keyword: 'type', expected: { type: 'object' } }],
    [null, { path: '/name', keyword: 'required', expected: { type: 'string', maxLength: 50 } }],
  ])('refuses %j with invalid_arguments naming the path and the expected schema', async (args, details) => {
    const host = await startHost();
    const error = errorOf(await host.call('greet', args));
    expect(error.code).toBe('invalid_arguments');
    expect(error.details).toMatchObject(details);
  });

  it('treats absent arguments as {}', async () => {
    const host = await startHost();
    expect(textOf(await host.call('echo', undefined))).toBe('null');
    expect(textOf(await host.call('greet', { name: 'Ada' }))).toBe('Hello, Ada');
  });
});

describe('policy decision', () => {
  it('allows what a shadow organisation policy would deny, journaled as would_deny with its rule', async () => {
    const shadow = ['kind: Policy', 'name: trial', 'mode: shadow', 'tools:', '  deny: ["echo"]', ''].join('\n');
    const host = await startHost({ extraPolicies: [shadow] });
    const outcome = resultOf(await host.call('echo', { value: 'still runs' }));
    // A read-only call's record is committed in a batch; another connection sees it after the flush.
    await host.flushJournal();
    const journal = Journal.open(host.stateDir, { asHost: false });
    try {
      const record = journal.get(outcome.callId);
      expect(record).toMatchObject({ tool: 'echo', status: 'completed', decision: 'would_deny' });
      expect(record?.rule).toMatch(/extra-0\.yaml:\d+ tools\.deny$/);
    } finally {
      journal.close();
    }
  });
});

describe('journal records of refusals', () => {
  it('writes one record per refused call with its status and code', async () => {
    const host = await startHost({ policy: 'limits:\n  maxCallsPerSession: 4' });
    const ids = [
      (await host.call('no_such_tool', {})).callId,
      (await host.call('forbidden', {})).callId,
      (await host.call('greet', {})).callId,
      (await host.call('greet', { name: 'x' })).callId,
      (await host.call('greet', { name: 'y' })).callId,
    ];
    await host.flushJournal();
    const journal = Journal.open(host.stateDir, { asHost: false });
    try {
      const records = ids.map((id) => journal.get(id));
      expect(records.map((record) => [record?.tool, record?.status, record?.errorCode])).toEqual([
        ['no_such_tool', 'rejected', 'unknown_tool'],
        ['forbidden', 'denied', 'policy_denied'],
        ['greet', 'rejected', 'invalid_arguments'],
        ['greet', 'completed', null],
        ['greet', 'denied', 'call_limit'],
      ]);
      expect(records[1]?.rule).toMatch(/tools\.deny$/);
      expect(records[1]?.decision).toBe('deny');
      expect(records[3]?.decision).toBe('allow');
    } finally {
      journal.close();
    }
  });
});
