// The journal side of a call (journal-entry.ts) on a real SQLite journal: a read-only
// call writes nothing ahead; its one record is queued and,
// once committed, carries the outcome and the call's egress counts; a mutating call's
// write-ahead record is finished in place.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../../../../src/audit/sqlite/sqlite-store.js';
import { HostError } from '../../../../src/errors.js';
import { createSilentLogger } from '../../../../src/log.js';
import type { ToolView } from '../../../../src/policy/types.js';
import { CallContext } from '../../../../src/supervisor/call-context.js';
import { CallControl } from '../../../../src/supervisor/call-control.js';
import { closeJournal } from '../../../../src/supervisor/stages/finish.js';
import { beginJournal } from '../../../../src/supervisor/stages/journal.js';
import { makeTempParent } from '../../../helpers/journal-fixtures.js';

let temp: ReturnType<typeof makeTempParent>;
let journal: SqliteStore;

beforeEach(() => {
  temp = makeTempParent();
  journal = openSqliteStore(temp.stateDir, { sessionId: 'session-1' });
});

afterEach(async () => {
  await journal.close();
  temp.remove();
});

function contextFor(sideEffect: string, meta: Record<string, unknown> = {}): CallContext {
  const ctx = new CallContext(
    { name: 'echo', args: { text: 'hi' }, meta, control: new CallControl(), approval: { kind: 'none' } },
    new CallControl([]),
    'session-1',
    createSilentLogger(),
  );
  // Only what journal-entry reads of the tool: its name and class.
  ctx.view = { manifest: { name: 'echo', sideEffect } } as unknown as ToolView;
  ctx.decision = 'allow';
  return ctx;
}

describe('journal entry of a call', () => {
  it('a read-only call: nothing written ahead, one group-committed record with its outcome and egress', async () => {
    const ctx = contextFor('read_only');
    expect(await beginJournal(journal, ctx)).toBeUndefined();
    expect(journal.sync.get(ctx.callId)).toBeUndefined();
    ctx.egress.admitted = 2;
    ctx.egress.refused = 1;
    const committed = closeJournal(journal, ctx, { kind: 'result', payloadHash: 'd'.repeat(64), payloadBytes: 5, replay: '{"content":[]}' });
    // Queued for the end of this event-loop turn: not written yet, and the call answers only once it is.
    expect(journal.sync.get(ctx.callId)).toBeUndefined();
    await committed;
    expect(journal.sync.get(ctx.callId)).toMatchObject({
      tool: 'echo',
      sideEffect: 'read_only',
      argsHash: ctx.argsHash,
      status: 'completed',
      errorCode: null,
      resultHash: 'd'.repeat(64),
      resultBytes: 5,
      egressAdmitted: 2,
      egressRefused: 1,
    });
  });

  it('a failed read-only call is recorded with the audit status of its error code', async () => {
    const ctx = contextFor('read_only');
    // Queued without awaiting: the test awaits what commits the batch (flush(), close() or a read).
    void closeJournal(journal, ctx, { kind: 'error', error: new HostError('timeout', 'too slow', {}) });
    await journal.flush();
    expect(await journal.get(ctx.callId)).toMatchObject({ status: 'failed', errorCode: 'timeout', resultHash: null, resultBytes: null, egressAdmitted: 0, egressRefused: 0 });
  });

  it('a mutating call: the started record before it runs, finished in place by the closing write', async () => {
    const ctx = contextFor('write');
    expect(await beginJournal(journal, ctx)).toEqual({ kind: 'begun' });
    ctx.journaled = true;
    expect(journal.sync.get(ctx.callId)).toMatchObject({ status: 'started' });
    await closeJournal(journal, ctx, { kind: 'input_required' });
    expect(journal.sync.get(ctx.callId)).toMatchObject({ status: 'denied', errorCode: 'approval_required', endedAt: expect.any(Number) });
  });
});
