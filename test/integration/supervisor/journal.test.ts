// The journal around a call (SPEC section 7): write-ahead records for mutating
// calls, idempotent replay (a counter file proves the tool ran once), the same
// key with other arguments, and an interrupted call refused.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteJournal as Journal } from '../../../src/audit/sqlite/sqlite-journal.js';
import { hashArgs } from '../../../src/audit/hash.js';
import { closeAllHosts, errorOf, resultOf, startHost } from './harness.js';

afterAll(closeAllHosts);

describe('idempotency', () => {
  it('replays the recorded result of a completed call without running the tool again', async () => {
    const host = await startHost();
    const meta = { idempotencyKey: 'order-42' };
    const first = resultOf(await host.call('counter', { note: 'n' }, { meta }));
    const second = resultOf(await host.call('counter', { note: 'n' }, { meta }));
    expect(first.structuredContent).toEqual({ count: 1, note: 'n' });
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(second.content).toEqual(first.content);
    expect(second.callId).not.toBe(first.callId);
    expect(readFileSync(join(host.workspace, 'counter.txt'), 'utf8')).toBe('1');
    // Without the key the tool runs again.
    resultOf(await host.call('counter', { note: 'n' }));
    expect(readFileSync(join(host.workspace, 'counter.txt'), 'utf8')).toBe('2');
  });

  it('replays across hosts on the same state folder', async () => {
    const host = await startHost();
    const meta = { idempotencyKey: 'across' };
    resultOf(await host.call('counter', {}, { meta }));
    await host.close();
    const again = await startHost({ root: host.root });
    expect(resultOf(await again.call('counter', {}, { meta })).structuredContent).toEqual({ count: 1, note: null });
    expect(readFileSync(join(host.workspace, 'counter.txt'), 'utf8')).toBe('1');
  });

  // Replays under today's policy: a replay is an answer, and the policy in force decides every answer.
  it.each([
    ['denied by name since', 'tools:\n  deny: ["counter"]', 'policy_denied'],
    ['denied by class since', 'sideEffects:\n  deny: [local_mutation]', 'policy_denied'],
    ['excluded since (its timeout is now above the limit)', 'limits:\n  maxTimeoutMs: 1000', 'policy_denied'],
  ])('does not replay a call whose tool is %s', async (_why, policy, code) => {
    const host = await startHost();
    const meta = { idempotencyKey: 'replay-under-policy' };
    resultOf(await host.call('counter', {}, { meta }));
    await host.close();
    const tightened = await startHost({ root: host.root, extraPolicies: [`kind: Policy\nname: tightened\n${policy}\n`] });
    const error = errorOf(await tightened.call('counter', {}, { meta }));
    expect(error.code).toBe(code);
    expect(error.details['rule']).toMatch(/extra-0\.yaml:\d+ /);
  });

  it('does not replay without the approval the policy now requires', async () => {
    const host = await startHost();
    const meta = { idempotencyKey: 'replay-needs-approval' };
    resultOf(await host.call('counter', {}, { meta }));
    await host.close();
    const tightened = await startHost({ root: host.root, extraPolicies: ['kind: Policy\nname: tightened\nsideEffects:\n  requireApproval: [local_mutation]\n'] });
    expect(errorOf(await tightened.call('counter', {}, { meta })).code).toBe('approval_required');
  });

  it('refuses the same key with other arguments as invalid_arguments', async () => {
    const host = await startHost();
    const meta = { idempotencyKey: 'k' };
    const first = resultOf(await host.call('counter', { note: 'a' }, { meta }));
    const error = errorOf(await host.call('counter', { note: 'b' }, { meta }));
    expect(error.code).toBe('invalid_arguments');
    expect(error.details).toMatchObject({ path: '/_meta/idempotencyKey', callId: first.callId });
    expect(readFileSync(join(host.workspace, 'counter.txt'), 'utf8')).toBe('1');
  });

  it('scopes keys per tool', async () => {
    const host = await startHost();
    const meta = { idempotencyKey: 'shared-key' };
    resultOf(await host.call('counter', {}, { meta }));
    expect(resultOf(await host.call('echo', { value: 'other tool' }, { meta })).content).toEqual([{ type: 'text', text: 'other tool' }]);
  });

  it('refuses a malformed key', async () => {
    const host = await startHost();
    const error = errorOf(await host.call('counter', {}, { meta: { idempotencyKey: 42 } }));
    expect(error.code).toBe('invalid_arguments');
    expect(error.details).toMatchObject({ path: '/_meta/idempotencyKey' });
  });

  it('refuses a key whose earlier call was interrupted with interrupted_side_effect, without running', async () => {
    const host = await startHost();
    const args = { note: 'pay' };
    // A call begun by another host that closed while it ran is left interrupted.
    const other = Journal.open(host.stateDir, { sessionId: 'crashed-session' });
    other.begin({
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
    other.close();
    const error = errorOf(await host.call('counter', args, { meta: { idempotencyKey: 'pay-1' } }));
    expect(error.code).toBe('interrupted_side_effect');
    expect(error.details).toMatchObject({ callId: 'interrupted-call-1', state: 'interrupted' });
    expect(existsSync(join(host.workspace, 'counter.txt'))).toBe(false);
  });
});

describe('write-ahead records', () => {
  it('journals a mutating call before it runs and closes the record after', async () => {
    const host = await startHost();
    let seenWhileRunning: string | undefined;
    const outcome = resultOf(
      await host.call('counter', {}, {
        onEvent: (event) => {
          if (event.type !== 'tool.started') return;
          const reader = Journal.open(host.stateDir, { asHost: false });
          try {
            seenWhileRunning = reader.get(event.callId)?.status;
          } finally {
            reader.close();
          }
        },
      }),
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
      await host.call('echo', { value: 1 }, {
        onEvent: (event) => {
          if (event.type !== 'tool.started') return;
          const reader = Journal.open(host.stateDir, { asHost: false });
          try {
            seenWhileRunning = reader.get(event.callId);
          } finally {
            reader.close();
          }
        },
      }),
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
