// The journal around a call (SPEC sections 7 and 7.1), with real hosts in this
// process. One contract, both stores: idempotent replay (a counter file proves
// the tool ran once, a second host's own workspace that it did not run there),
// a replay only under the policy in force now, the same key with other
// arguments, an interrupted key refused, every call's record. Write-ahead
// records are read back synchronously, inside the started event, so on SQLite
// only. Real host processes racing: test/e2e/fleet.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { hashArgs } from '../../../src/audit/hash.js';
import { openJournal } from '../../../src/audit/open-journal.js';
import { SqliteJournal as Journal } from '../../../src/audit/sqlite/sqlite-journal.js';
import { describeEachStore } from '../../helpers/journal-stores.js';
import { closeAllHosts, errorOf, resultOf, startHost, type TestHost, type TestHostOptions } from '../../helpers/supervisor-host.js';

afterAll(closeAllHosts);

describeEachStore('idempotency around a call', (store) => {
  // Registered after the store's own hooks, so it runs before them: hosts close before their database goes.
  afterEach(closeAllHosts);
  const onJournal = (options: TestHostOptions = {}): Promise<TestHost> => startHost({ ...options, host: { journalUrl: store().url } });
  const countIn = (host: TestHost): string => readFileSync(join(host.workspace, 'counter.txt'), 'utf8');

  it('replays the recorded result of a completed call without running the tool again', async () => {
    const host = await onJournal();
    const meta = { idempotencyKey: 'order-42' };
    const first = resultOf(await host.call('counter', { note: 'n' }, { meta }));
    const second = resultOf(await host.call('counter', { note: 'n' }, { meta }));
    expect(first.structuredContent).toEqual({ count: 1, note: 'n' });
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(second.content).toEqual(first.content);
    expect(second.callId).not.toBe(first.callId);
    expect(countIn(host)).toBe('1');
    // Without the key the tool runs again.
    resultOf(await host.call('counter', { note: 'n' }));
    expect(countIn(host)).toBe('2');
  });

  it('a key used on one host is replayed on another without running the tool there', async () => {
    const [first, second] = await Promise.all([onJournal(), onJournal()]);
    const meta = { idempotencyKey: 'order-42' };
    const ran = resultOf(await first.call('counter', { note: 'n' }, { meta }));
    expect(ran.structuredContent).toEqual({ count: 1, note: 'n' });
    const replayed = resultOf(await second.call('counter', { note: 'n' }, { meta }));
    expect(replayed.structuredContent).toEqual(ran.structuredContent);
    expect(countIn(first)).toBe('1');
    expect(existsSync(join(second.workspace, 'counter.txt'))).toBe(false);
  });

  it('replays after the host that ran the call has closed', async () => {
    const host = await onJournal();
    const meta = { idempotencyKey: 'across' };
    resultOf(await host.call('counter', {}, { meta }));
    await host.close();
    const again = await onJournal({ root: host.root });
    expect(resultOf(await again.call('counter', {}, { meta })).structuredContent).toEqual({ count: 1, note: null });
    expect(countIn(again)).toBe('1');
  });

  // Replays under today's policy: a replay is an answer, and the policy in force decides every answer.
  it.each([
    ['denied by name since', 'tools:\n  deny: ["counter"]', 'policy_denied'],
    ['denied by class since', 'sideEffects:\n  deny: [local_mutation]', 'policy_denied'],
    ['excluded since (its timeout is now above the limit)', 'limits:\n  maxTimeoutMs: 1000', 'policy_denied'],
  ])('does not replay a call whose tool is %s', async (_why, policy, code) => {
    const host = await onJournal();
    const meta = { idempotencyKey: 'replay-under-policy' };
    resultOf(await host.call('counter', {}, { meta }));
    await host.close();
    const tightened = await onJournal({ root: host.root, extraPolicies: [`kind: Policy\nname: tightened\n${policy}\n`] });
    const error = errorOf(await tightened.call('counter', {}, { meta }));
    expect(error.code).toBe(code);
    expect(error.details['rule']).toMatch(/extra-0\.yaml:\d+ /);
  });

  it('does not replay without the approval the policy now requires', async () => {
    const host = await onJournal();
    const meta = { idempotencyKey: 'replay-needs-approval' };
    resultOf(await host.call('counter', {}, { meta }));
    await host.close();
    const tightened = await onJournal({ root: host.root, extraPolicies: ['kind: Policy\nname: tightened\nsideEffects:\n  requireApproval: [local_mutation]\n'] });
    expect(errorOf(await tightened.call('counter', {}, { meta })).code).toBe('approval_required');
  });

  it('refuses the same key with other arguments as invalid_arguments, on this host and another', async () => {
    const [host, other] = await Promise.all([onJournal(), onJournal()]);
    const meta = { idempotencyKey: 'k' };
    const first = resultOf(await host.call('counter', { note: 'a' }, { meta }));
    for (const caller of [host, other]) {
      const error = errorOf(await caller.call('counter', { note: 'b' }, { meta }));
      expect(error.code).toBe('invalid_arguments');
      expect(error.details).toMatchObject({ path: '/_meta/idempotencyKey', callId: first.callId });
    }
    expect(countIn(host)).toBe('1');
    expect(existsSync(join(other.workspace, 'counter.txt'))).toBe(false);
  });

  it('scopes keys per tool', async () => {
    const host = await onJournal();
    const meta = { idempotencyKey: 'shared-key' };
    resultOf(await host.call('counter', {}, { meta }));
    expect(resultOf(await host.call('echo', { value: 'other tool' }, { meta })).content).toEqual([{ type: 'text', text: 'other tool' }]);
  });

  it('refuses a malformed key', async () => {
    const host = await onJournal();
    const error = errorOf(await host.call('counter', {}, { meta: { idempotencyKey: 42 } }));
    expect(error.code).toBe('invalid_arguments');
    expect(error.details).toMatchObject({ path: '/_meta/idempotencyKey' });
  });

  it('refuses a key whose call was interrupted on another host with interrupted_side_effect, without running', async () => {
    const host = await onJournal();
    const args = { note: 'pay' };
    // A call begun by another host that closed while it ran is left interrupted.
    const other = await openJournal({ url: store().url, stateDir: join(host.root, 'other-state'), sessionId: 'crashed-session' });
    await other.begin({
      id: 'interrupted-call-1',
      sessionId: 'crashed-session',
      principal: null,
      tool: 'counter',
      argsHash: hashArgs(args),
      sideEffect: 'local_mutation',
      decision: 'allow',
      rule: null,
      approval: 'not_needed',
      idempotencyKey: 'pay-1',
      startedAt: Date.now(),
    });
    await other.close();
    const error = errorOf(await host.call('counter', args, { meta: { idempotencyKey: 'pay-1' } }));
    expect(error).toMatchObject({ code: 'interrupted_side_effect', details: { callId: 'interrupted-call-1', state: 'interrupted' } });
    expect(existsSync(join(host.workspace, 'counter.txt'))).toBe(false);
  });

  it('every call leaves its record in the journal the host was given', async () => {
    const host = await onJournal();
    const outcome = resultOf(await host.call('counter', {}));
    const reader = await store().open({ asHost: false });
    expect(await reader.get(outcome.callId)).toMatchObject({ tool: 'counter', status: 'completed', sideEffect: 'local_mutation', argsHash: hashArgs({}) });
  });
});

describe('write-ahead records (sqlite store: read back synchronously inside the started event)', () => {
  it('journals a mutating call before it runs and closes the record after', async () => {
    const host = await startHost();
    let seenWhileRunning: string | undefined;
    const outcome = resultOf(
      await host.call(
        'counter',
        {},
        {
          onEvent: (event) => {
            if (event.type !== 'tool.started') return;
            const reader = Journal.open(host.stateDir, { asHost: false });
            try {
              seenWhileRunning = reader.get(event.callId)?.status;
            } finally {
              reader.close();
            }
          },
        },
      ),
    );
    expect(seenWhileRunning).toBe('started');
    const reader = Journal.open(host.stateDir, { asHost: false });
    try {
      const record = reader.get(outcome.callId);
      expect(record).toMatchObject({ tool: 'counter', status: 'completed', sideEffect: 'local_mutation', argsHash: hashArgs({}) });
      expect(record?.resultBytes).toBe(Buffer.byteLength('{"count":1,"note":null}'));
    } finally {
      reader.close();
    }
  });

  it('records a read-only call only when it ends', async () => {
    const host = await startHost();
    let seenWhileRunning: unknown = 'not checked';
    const outcome = resultOf(
      await host.call(
        'echo',
        { value: 1 },
        {
          onEvent: (event) => {
            if (event.type !== 'tool.started') return;
            const reader = Journal.open(host.stateDir, { asHost: false });
            try {
              seenWhileRunning = reader.get(event.callId);
            } finally {
              reader.close();
            }
          },
        },
      ),
    );
    expect(seenWhileRunning).toBeUndefined();
    // Queued for its batch (committed a few ms after the answer); the flush commits it now.
    await host.flushJournal();
    const reader = Journal.open(host.stateDir, { asHost: false });
    try {
      expect(reader.get(outcome.callId)).toMatchObject({ status: 'completed', sideEffect: 'read_only' });
    } finally {
      reader.close();
    }
  });
});
