// Pending operator approvals through the journal interface, on both stores:
// listed while pending, decided once, spent once (by one host of many),
// refused when denied, expired, spent or for other arguments.
import { expect, it } from 'vitest';
import type { NewApproval } from '../../../src/audit/journal.js';
import { hashArgs } from '../../../src/audit/hash.js';
import { describeEachStore, rejection } from '../../helpers/journal-stores.js';

let counter = 0;
function pending(overrides: Partial<NewApproval> = {}): NewApproval {
  counter += 1;
  const now = Date.now();
  return {
    id: `approval-${counter}-${Math.random().toString(16).slice(2)}`,
    tool: 'deploy',
    argsHash: hashArgs({ env: 'prod' }),
    sideEffect: 'remote_mutation',
    rule: 'policies/org.yaml:7 sideEffects.requireApproval',
    principal: 'ci-runner',
    sessionId: 'session-1',
    callId: `call-${counter}`,
    createdAt: now,
    expiresAt: now + 60_000,
    arguments: { env: 'prod' },
    effects: null,
    ...overrides,
  };
}

describeEachStore('operator approvals', (store) => {
  it('a pending approval is listed with what it is for', async () => {
    const journal = await store().open();
    const asked = pending();
    expect(await journal.createApproval(asked)).toEqual({
      ...asked,
      hostId: journal.hostId,
      state: 'pending',
      decidedBy: null,
      decidedAt: null,
      note: null,
      decidedVia: null,
      spentBy: null,
      spentAt: null,
    });
    expect(journal.hostId).toEqual(expect.any(String));
    expect((await journal.listApprovals({ pendingOnly: true })).map((a) => a.id)).toEqual([asked.id]);
    expect(await journal.getApproval(asked.id)).toEqual(await journal.createApproval({ ...asked, id: `${asked.id}-again` }).then(() => journal.getApproval(asked.id)));
  });

  it('keeps the arguments and the projected effect as given, and the decision with its note and where it was given', async () => {
    const journal = await store().open();
    const effects = [
      {
        argument: 'path',
        path: '/ws/a.md',
        where: 'writable_root' as const,
        summary: 'creates a new file (+1 -0 lines)',
        diff: '--- /dev/null\n+++ b/a.md\n@@ -0,0 +1 @@\n+<script>x</script>',
      },
    ];
    const asked = await journal.createApproval(pending({ arguments: { path: 'a.md', nested: { list: [1, 'two', null] } }, effects }));
    expect(asked).toMatchObject({ arguments: { path: 'a.md', nested: { list: [1, 'two', null] } }, effects });
    const decided = await journal.decideApproval(asked.id, 'denied', 'alice', { note: 'not on a Friday', via: 'console (principal ops)' });
    expect(decided).toMatchObject({ state: 'denied', decidedBy: 'alice', note: 'not on a Friday', decidedVia: 'console (principal ops)' });
    expect(await journal.getApproval(asked.id)).toEqual(decided);
    // The command line's decision says where it came from too.
    const other = await journal.createApproval(pending({ arguments: null }));
    expect(other.arguments).toBeNull();
    expect(await journal.decideApproval(other.id, 'approved', 'bob')).toMatchObject({ note: null, decidedVia: 'cli' });
    expect(await journal.getApproval('unknown-id')).toBeUndefined();
  });

  it('bound to the definition it was asked for: a changed definition cannot spend it (SPEC 4.2)', async () => {
    const journal = await store().open();
    const pinned = 'd'.repeat(64);
    const asked = await journal.createApproval(pending({ definitionDigest: pinned }));
    expect(asked.definitionDigest).toBe(pinned);
    await journal.decideApproval(asked.id, 'approved', 'alice');
    expect(await journal.spendApproval(asked.id, 'deploy', asked.argsHash, 'c-new', 'e'.repeat(64))).toMatchObject({ ok: false, reason: 'definition_changed' });
    expect(await journal.spendApproval(asked.id, 'deploy', asked.argsHash, 'c-none')).toMatchObject({ ok: false, reason: 'definition_changed' });
    expect(await journal.spendApproval(asked.id, 'deploy', asked.argsHash, 'c-1', pinned)).toMatchObject({ ok: true });
  });

  it('approved once, spent once: the second spend, other arguments and another tool are refused', async () => {
    const journal = await store().open();
    const asked = await journal.createApproval(pending());
    expect(await journal.spendApproval(asked.id, 'deploy', asked.argsHash, 'c-early')).toMatchObject({ ok: false, reason: 'pending' });
    const approved = await journal.decideApproval(asked.id, 'approved', 'alice');
    expect(approved).toMatchObject({ state: 'approved', decidedBy: 'alice' });
    expect(approved.decidedAt).toBeTypeOf('number');
    expect(await journal.spendApproval(asked.id, 'deploy', hashArgs({ env: 'staging' }), 'c-other')).toMatchObject({ ok: false, reason: 'other_arguments' });
    expect(await journal.spendApproval(asked.id, 'destroy', asked.argsHash, 'c-tool')).toMatchObject({ ok: false, reason: 'other_arguments' });
    expect(await journal.spendApproval(asked.id, 'deploy', asked.argsHash, 'c-1')).toMatchObject({ ok: true, approval: { state: 'spent', spentBy: 'c-1' } });
    expect(await journal.spendApproval(asked.id, 'deploy', asked.argsHash, 'c-2')).toMatchObject({ ok: false, reason: 'spent' });
    expect(await journal.listApprovals({ pendingOnly: true })).toEqual([]);
    expect((await journal.listApprovals()).map((a) => a.state)).toEqual(['spent']);
  });

  it('a denied approval is refused; a decision is given once', async () => {
    const journal = await store().open();
    const asked = await journal.createApproval(pending());
    await journal.decideApproval(asked.id, 'denied', 'bob');
    expect(await journal.spendApproval(asked.id, 'deploy', asked.argsHash, 'c-1')).toMatchObject({ ok: false, reason: 'denied' });
    expect(await rejection(() => journal.decideApproval(asked.id, 'approved', 'mallory'))).toEqual({ code: 'approval_decided', details: { id: asked.id, state: 'denied' } });
  });

  it('an expired approval can be neither decided nor spent; an unknown id is unknown', async () => {
    const journal = await store().open();
    const past = Date.now() - 10_000;
    const stale = await journal.createApproval(pending({ createdAt: past, expiresAt: past + 1 }));
    expect((await rejection(() => journal.decideApproval(stale.id, 'approved', 'alice'))).code).toBe('approval_expired');
    expect(await journal.spendApproval(stale.id, 'deploy', stale.argsHash, 'c-1')).toMatchObject({ ok: false, reason: 'expired' });
    expect(await journal.listApprovals({ pendingOnly: true })).toEqual([]);
    expect((await rejection(() => journal.decideApproval('nope', 'approved', 'alice'))).code).toBe('unknown_approval');
    expect(await journal.spendApproval('nope', 'deploy', stale.argsHash, 'c-1')).toEqual({ ok: false, reason: 'unknown' });
  });

  it('hosts spending one approval at once: exactly one call runs', async () => {
    const hosts = await Promise.all(Array.from({ length: 5 }, () => store().open()));
    const asked = await hosts[0]!.createApproval(pending());
    await hosts[1]!.decideApproval(asked.id, 'approved', 'alice');
    const spends = await Promise.all(hosts.map((host, i) => host.spendApproval(asked.id, 'deploy', asked.argsHash, `c-${i}`)));
    expect(spends.filter((spend) => spend.ok)).toHaveLength(1);
    expect(spends.filter((spend) => !spend.ok).map((spend) => (spend.ok ? '' : spend.reason))).toEqual(['spent', 'spent', 'spent', 'spent']);
  });
});
