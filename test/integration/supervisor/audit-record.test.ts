// What a call record tells an auditor (SPEC section 7.1), through real hosts:
// the digest of the merged policy in force, the tool's definition digest, who
// approved the call (the client, or an operator by name), and, only when the
// policy asks for it, the arguments redacted and bounded. The chain of such a
// journal (an operator's decision included) verifies.
import { afterAll, describe, expect, it } from 'vitest';
import { openJournal } from '../../../src/audit/open-journal.js';
import { verifyJournal } from '../../../src/audit/verify-journal.js';
import { MAX_JOURNALED_ARGUMENT_CHARS } from '../../../src/supervisor/journaled-arguments.js';
import type { ApprovalChannel } from '../../../src/supervisor/types.js';
import { closeAllHosts, errorOf, resultOf, startHost, type TestHost } from '../../helpers/supervisor-host.js';

afterAll(closeAllHosts);

const approving: ApprovalChannel = { kind: 'elicitation', elicit: async () => ({ action: 'accept', content: { approve: true } }) };

async function recordOf(host: TestHost, callId: string) {
  await host.flushJournal();
  const journal = await openJournal({ stateDir: host.stateDir, asHost: false, recover: false });
  try {
    return await journal.get(callId);
  } finally {
    await journal.close();
  }
}

describe('a call record', () => {
  it('holds the policy digest in force, the definition digest, and the client as approver', async () => {
    const host = await startHost();
    const outcome = resultOf(await host.call('dangerous', { target: 'old.log' }, { approval: approving }));
    const view = host.config.tools.get('dangerous');
    const record = await recordOf(host, outcome.callId);
    expect(record).toMatchObject({
      status: 'completed',
      approval: 'approved',
      approvedBy: 'client',
      approverName: null,
      policyDigest: host.config.session.policyDigest,
      definitionDigest: view!.definitionDigest,
      arguments: null,
    });
    expect(record?.policyDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(record?.definitionDigest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a different policy in force gives a different digest', async () => {
    const [plain, tighter] = await Promise.all([startHost(), startHost({ policy: 'limits:\n  maxConcurrency: 3' })]);
    const a = resultOf(await plain.call('dangerous', { target: 'x' }, { approval: approving }));
    const b = resultOf(await tighter.call('dangerous', { target: 'x' }, { approval: approving }));
    expect((await recordOf(plain, a.callId))?.policyDigest).not.toBe((await recordOf(tighter, b.callId))?.policyDigest);
  });

  it('names the operator who approved it, and the chain with that decision verifies', async () => {
    const host = await startHost({ policy: 'approvals:\n  by: operator' });
    const first = await host.call('dangerous', { target: 'prod.db' });
    const refused = errorOf(first);
    expect(refused.code).toBe('approval_required');
    const approvalId = refused.details['approvalId'] as string;
    const operator = await openJournal({ stateDir: host.stateDir, asHost: false });
    try {
      await operator.decideApproval(approvalId, 'approved', 'alice');
    } finally {
      await operator.close();
    }
    const ran = resultOf(await host.call('dangerous', { target: 'prod.db' }, { meta: { 'toolhost/approvalId': approvalId } }));
    expect(await recordOf(host, ran.callId)).toMatchObject({ status: 'completed', approvedBy: 'operator', approverName: 'alice' });
    expect(await recordOf(host, first.callId)).toMatchObject({ status: 'denied', errorCode: 'approval_required', approvedBy: null });

    const auditor = await openJournal({ stateDir: host.stateDir, asHost: false, recover: false });
    try {
      const report = await verifyJournal(auditor);
      expect(report.firstBreak).toBeNull();
      // The host's chain and the operator's (its decision, signed when its command closed the journal).
      expect(report.chains.map((chain) => chain.role).sort()).toEqual(['host', 'operator']);
      expect(report.chains.find((chain) => chain.role === 'operator')?.closed).toBe(true);
    } finally {
      await auditor.close();
    }
  });

  it('keeps the arguments, redacted and bounded, only under journal.arguments: redacted', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const env = { ...process.env, BILLING_API_TOKEN: secret };
    const target = `${secret} ${'x'.repeat(10_000)}`;
    const keeping = await startHost({ env, policy: 'journal:\n  arguments: redacted' });
    const kept = resultOf(await keeping.call('echo', { value: target }));
    const text = (await recordOf(keeping, kept.callId))?.arguments;
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(secret);
    expect(text?.startsWith('{"value":"[redacted] xxx')).toBe(true);
    expect(text?.length).toBeLessThanOrEqual(MAX_JOURNALED_ARGUMENT_CHARS);

    const plain = await startHost({ env });
    const notKept = resultOf(await plain.call('echo', { value: target }));
    expect((await recordOf(plain, notKept.callId))?.arguments).toBeNull();
  });
});
