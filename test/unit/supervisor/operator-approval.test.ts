// The approval stage with an operator behind it (SPEC section 7.2), against a
// real (SQLite) journal: who gets asked, what is journaled, and how a repeat
// with an approval id is decided. Across stores and hosts: test/e2e/operator-approvals.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashArgs } from '../../../src/audit/hash.js';
import { openSqliteStore, type SqliteStore } from '../../../src/audit/sqlite/sqlite-store.js';
import { HostError } from '../../../src/errors.js';
import type { ToolView } from '../../../src/policy/types.js';
import { obtainApproval, type ApprovalInput } from '../../../src/supervisor/stages/approval.js';
import { APPROVAL_ID_META, type OperatorApprovals } from '../../../src/supervisor/operator-approval.js';
import type { CallDecision } from '../../../src/policy/tool-decision.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { RequestStateSigner } from '../../../src/supervisor/request-state.js';
import { createRedactor } from '../../../src/supervisor/redact.js';
import type { ApprovalChannel, CallRequest } from '../../../src/supervisor/types.js';
import { makeTempParent } from '../../helpers/journal-fixtures.js';

// Only what the approval stage reads of a tool.
const VIEW = { manifest: { name: 'deploy', sideEffect: 'remote_mutation' } } as unknown as ToolView;
const ASK: CallDecision = {
  effect: 'ask',
  code: null,
  rule: 'policies/org.yaml:4 sideEffects.requireApproval',
  reason: 'remote mutation',
  excluded: false,
  shadow: null,
  journal: { decision: 'ask', rule: 'policies/org.yaml:4 sideEffects.requireApproval' },
};
const ARGS = { env: 'prod' };
const SECRET = 'hunter2-hunter2-hunter2';
const REDACT = createRedactor({ secretValues: [SECRET], visibleRoots: [] });

let temp: ReturnType<typeof makeTempParent>;
let journal: SqliteStore;
let elicited: number;

beforeEach(() => {
  temp = makeTempParent();
  journal = openSqliteStore(temp.stateDir);
  elicited = 0;
});
afterEach(async () => {
  await journal.close();
  temp.remove();
});

const ELICIT: ApprovalChannel = {
  kind: 'elicitation',
  elicit: async () => {
    elicited++;
    return { action: 'accept', content: { approve: true } };
  },
};

function input(options: {
  channel?: ApprovalChannel;
  meta?: Record<string, unknown>;
  by?: 'client' | 'operator';
  args?: Record<string, unknown>;
  decision?: CallDecision;
  callId?: string;
}): ApprovalInput {
  const args = options.args ?? ARGS;
  const request: CallRequest = { name: 'deploy', args, meta: options.meta ?? {}, control: new CallControl(), approval: options.channel ?? { kind: 'none' } };
  const operator: OperatorApprovals = {
    journal,
    by: options.by ?? 'client',
    expireAfterMs: 60_000,
    sessionId: 's1',
    callId: options.callId ?? 'call-1',
    principal: null,
    journalFlags: "--state '/srv/tool host/state'",
    redact: REDACT,
  };
  return {
    view: VIEW,
    args,
    argsHash: hashArgs(args),
    decision: options.decision ?? ASK,
    request,
    control: new CallControl(),
    signer: new RequestStateSigner({ ttlMs: 60_000 }),
    timeoutMs: 1000,
    operator,
    redact: REDACT,
  };
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HostError) return { code: error.code, details: { ...error.details } };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('operator approvals in the approval stage', () => {
  it('a client that cannot be asked: approval_required with an id, and the pending approval journaled', async () => {
    const refused = await refusal(obtainApproval(input({})));
    expect(refused).toMatchObject({
      code: 'approval_required',
      details: { rule: ASK.rule, approvalId: expect.any(String), expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) },
    });
    expect(await journal.listApprovals({ pendingOnly: true })).toEqual([
      expect.objectContaining({
        id: refused.details['approvalId'],
        tool: 'deploy',
        argsHash: hashArgs(ARGS),
        sideEffect: 'remote_mutation',
        rule: ASK.rule,
        sessionId: 's1',
        callId: 'call-1',
        state: 'pending',
        arguments: ARGS,
        effects: null,
      }),
    ]);
  });

  it('approval_required carries the exact command that approves it, with the journal it needs', async () => {
    const refused = await refusal(obtainApproval(input({})));
    const command = `toolhost approve ${String(refused.details['approvalId'])} --state '/srv/tool host/state'`;
    expect(refused.details['approveCommand']).toBe(command);
    const thrown = await obtainApproval(input({})).catch((error: unknown) => error as HostError);
    expect((thrown as HostError).message).toContain('`toolhost approve ');
    // Still pending: the repeat names the same command.
    const id = String(refused.details['approvalId']);
    expect((await refusal(obtainApproval(input({ meta: { [APPROVAL_ID_META]: id } })))).details['approveCommand']).toBe(command);
  });

  it('the pending approval keeps the arguments redacted and bounded, for the operator to read', async () => {
    const args = { token: SECRET, text: 'x'.repeat(50_000), deep: { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } } };
    const refused = await refusal(obtainApproval(input({ args })));
    const [kept] = await journal.listApprovals();
    expect(kept?.id).toBe(refused.details['approvalId']);
    expect(kept?.argsHash).toBe(hashArgs(args));
    const text = JSON.stringify(kept?.arguments);
    expect(text).not.toContain(SECRET);
    expect(text).toContain('[redacted]');
    expect(text.length).toBeLessThan(20_000);
    expect(text).toMatch(/x…\[\d+ bytes left out\]…x/);
    expect(text).toContain('nested deeper than');
  });

  it('by: operator never asks the client, even one that could be asked', async () => {
    expect((await refusal(obtainApproval(input({ channel: ELICIT, by: 'operator' })))).code).toBe('approval_required');
    expect(elicited).toBe(0);
    // by: client with such a client still asks it, and journals nothing.
    await expect(obtainApproval(input({ channel: ELICIT }))).resolves.toEqual({ status: 'approved', by: 'client' });
    expect(elicited).toBe(1);
    expect(await journal.listApprovals()).toHaveLength(1);
  });

  it('the repeat with the approved id runs once; the id alone decides, whatever the channel', async () => {
    const id = String((await refusal(obtainApproval(input({})))).details['approvalId']);
    expect(await refusal(obtainApproval(input({ meta: { [APPROVAL_ID_META]: id } })))).toMatchObject({ code: 'approval_required', details: { approvalId: id, state: 'pending' } });
    await journal.decideApproval(id, 'approved', 'alice');
    await expect(obtainApproval(input({ channel: ELICIT, meta: { [APPROVAL_ID_META]: id }, callId: 'call-2' }))).resolves.toEqual({
      status: 'approved',
      by: 'operator',
      operatorName: expect.any(String),
    });
    expect(elicited).toBe(0);
    expect(await refusal(obtainApproval(input({ meta: { [APPROVAL_ID_META]: id } })))).toMatchObject({ code: 'approval_denied', details: { reason: 'spent' } });
  });

  it.each([[42], [''], ['x'.repeat(129)]])('a malformed approval id %j is approval_denied', async (id) => {
    expect(await refusal(obtainApproval(input({ meta: { [APPROVAL_ID_META]: id } })))).toMatchObject({ code: 'approval_denied', details: { reason: 'malformed' } });
  });

  it('a call the policy allows needs no approval, whatever it carries', async () => {
    const allow: CallDecision = { effect: 'allow', code: null, rule: null, reason: null, excluded: false, shadow: null, journal: { decision: 'allow', rule: null } };
    await expect(obtainApproval(input({ decision: allow, meta: { [APPROVAL_ID_META]: 'whatever' } }))).resolves.toEqual({ status: 'not_needed' });
    expect(await journal.listApprovals()).toEqual([]);
  });
});
