// The idempotency stage (supervisor/idempotency.ts) against a real journal,
// through the Journal interface on both stores: every state a key can be in
// and what the stage answers for it. What the journal itself keeps for a key
// (the claim in begin, reconcile) is tested in test/unit/audit/idempotency.test.ts.
import { expect, it } from 'vitest';
import type { Journal } from '../../../../src/audit/journal.js';
import { hashArgs } from '../../../../src/audit/hash.js';
import { checkIdempotency, serializeForReplay } from '../../../../src/supervisor/stages/idempotency.js';
import { callFinish, callStart } from '../../../helpers/journal-fixtures.js';
import { describeEachStore, rejection } from '../../../helpers/journal-stores.js';

const TOOL = 'write';
const ARGS_HASH = hashArgs({ a: 1 });

/** A call of TOOL with `key` and ARGS_HASH. */
const keyed = (id: string, key: string) => callStart({ id, tool: TOOL, argsHash: ARGS_HASH, sideEffect: 'local_mutation', rule: null, idempotencyKey: key });

describeEachStore('checkIdempotency', (store) => {
  /** Opens a host journal; `reopen` closes it (its started calls become interrupted) and opens another. */
  async function opened(): Promise<{ journal: Journal; reopen(): Promise<Journal> }> {
    let journal = await store().open();
    return {
      journal,
      async reopen() {
        await journal.close();
        journal = await store().open();
        return journal;
      },
    };
  }

  it('lets a call without a key, or with a new key, run', async () => {
    const { journal } = await opened();
    expect(await checkIdempotency(journal, TOOL, null, ARGS_HASH)).toBeUndefined();
    expect(await checkIdempotency(journal, TOOL, 'new', ARGS_HASH)).toBeUndefined();
  });

  it('replays a completed call with the same arguments', async () => {
    const { journal } = await opened();
    const result = { content: [{ type: 'text' as const, text: '{"ok":true}' }], structuredContent: { ok: true } };
    const replay = serializeForReplay(result);
    await journal.record(keyed('c1', 'k'), callFinish({ replay }));
    expect(await checkIdempotency(journal, TOOL, 'k', ARGS_HASH)).toEqual({ fromCallId: 'c1', ...result, serialized: replay });
  });

  it('refuses other arguments with invalid_arguments', async () => {
    const { journal } = await opened();
    await journal.record(keyed('c1', 'k'), callFinish({ replay: '{"content":[]}' }));
    expect(await rejection(async () => checkIdempotency(journal, TOOL, 'k', hashArgs({ a: 2 })))).toMatchObject({
      code: 'invalid_arguments',
      details: { path: '/_meta/idempotencyKey', callId: 'c1' },
    });
  });

  it('refuses a key whose call is still running, was interrupted, or was reconciled as done', async () => {
    const session = await opened();
    await session.journal.begin(keyed('running', 'k-run'));
    expect(await rejection(async () => checkIdempotency(session.journal, TOOL, 'k-run', ARGS_HASH))).toEqual({
      code: 'interrupted_side_effect',
      details: { callId: 'running', state: 'in_progress' },
    });
    const journal = await session.reopen();
    expect((await rejection(async () => checkIdempotency(journal, TOOL, 'k-run', ARGS_HASH))).details).toEqual({ callId: 'running', state: 'interrupted' });
    await journal.reconcile('running', 'skip');
    expect((await rejection(async () => checkIdempotency(journal, TOOL, 'k-run', ARGS_HASH))).details).toEqual({ callId: 'running', state: 'reconciled_skip' });
  });

  it('lets a key run again after an interrupted call is reconciled with rerun, or after a failure', async () => {
    const session = await opened();
    await session.journal.begin(keyed('int', 'k-rerun'));
    const journal = await session.reopen();
    await journal.reconcile('int', 'rerun');
    expect(await checkIdempotency(journal, TOOL, 'k-rerun', ARGS_HASH)).toBeUndefined();
    await journal.record(keyed('f', 'k-failed'), callFinish({ status: 'failed', errorCode: 'timeout', resultHash: null, resultBytes: null }));
    expect(await checkIdempotency(journal, TOOL, 'k-failed', ARGS_HASH)).toBeUndefined();
  });

  it('scopes keys per tool', async () => {
    const { journal } = await opened();
    await journal.begin(keyed('w', 'k'));
    expect(await checkIdempotency(journal, 'other_tool', 'k', ARGS_HASH)).toBeUndefined();
  });
});
