// Idempotency keys through the journal interface, on both stores: what
// governs a key, the atomic claim in begin(), and an operator's reconcile.
import { expect, it } from 'vitest';
import type { CallStart, Journal } from '../../../src/audit/journal.js';
import { callFinish, callStart } from '../../helpers/journal-fixtures.js';
import { describeEachStore, rejection, type StoreUnderTest } from '../../helpers/journal-stores.js';

/** A call still running when its host stopped (close marks it interrupted); returns the reopened journal. */
async function interruptedCall(store: StoreUnderTest, journal: Journal, overrides: Partial<CallStart> = {}): Promise<{ start: CallStart; journal: Journal }> {
  const start = callStart(overrides);
  await journal.begin(start);
  await journal.close();
  const reopened = await store.open();
  expect((await reopened.get(start.id))?.status).toBe('interrupted');
  return { start, journal: reopened };
}

describeEachStore('findByIdempotencyKey', (store) => {
  it('returns the completed call with its replay, scoped per tool', async () => {
    let journal = await store().open();
    const start = callStart({ idempotencyKey: 'k1' });
    await journal.record(start, callFinish({ replay: '{"content":[{"type":"text","text":"ok"}]}' }));
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toEqual({
      id: start.id,
      status: 'completed',
      argsHash: start.argsHash,
      replay: '{"content":[{"type":"text","text":"ok"}]}',
      reconciliation: null,
    });
    expect(await journal.findByIdempotencyKey('fs.delete', 'k1')).toBeUndefined();
    expect(await journal.findByIdempotencyKey('fs.write', 'k2')).toBeUndefined();
  });

  it('reports a call in flight as started', async () => {
    let journal = await store().open();
    const start = callStart({ idempotencyKey: 'k1' });
    await journal.begin(start);
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toMatchObject({ id: start.id, status: 'started', replay: null });
  });

  it.each(['failed', 'denied', 'rejected', 'cancelled'] as const)('a %s call does not hold its key', async (status) => {
    const journal = await store().open();
    await journal.record(callStart({ idempotencyKey: 'k1' }), callFinish({ status, errorCode: 'tool_error' }));
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toBeUndefined();
  });

  it('an unreconciled interrupted call wins over a later refusal and a completed call', async () => {
    let journal = await store().open();
    const { start: interrupted, journal: reopened } = await interruptedCall(store(), journal, { idempotencyKey: 'k1' });
    journal = reopened;
    // record() does not claim (a read-only call's one record): a completed record may sit beside it.
    await journal.record(callStart({ idempotencyKey: 'k1', startedAt: 1 }), callFinish({ replay: '{}' }));
    await journal.record(callStart({ idempotencyKey: 'k1' }), callFinish({ status: 'denied', errorCode: 'interrupted_side_effect' }));
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toMatchObject({ id: interrupted.id, status: 'interrupted', replay: null });
  });
});

describeEachStore('begin claims the key', (store) => {
  it('a second begin with a held key writes nothing and names the holder', async () => {
    const journal = await store().open();
    const first = callStart({ idempotencyKey: 'k1' });
    expect(await journal.begin(first)).toEqual({ kind: 'begun' });
    const second = callStart({ idempotencyKey: 'k1', argsHash: first.argsHash });
    expect(await journal.begin(second)).toEqual({ kind: 'held', holder: expect.objectContaining({ id: first.id, status: 'started' }) });
    expect(await journal.get(second.id)).toBeUndefined();
    await journal.finish(first.id, callFinish({ replay: '{"content":[]}' }));
    expect(await journal.begin(callStart({ idempotencyKey: 'k1' }))).toEqual({
      kind: 'held',
      holder: expect.objectContaining({ id: first.id, status: 'completed', replay: '{"content":[]}' }),
    });
  });

  it('a failed holder lets the key go', async () => {
    const journal = await store().open();
    const first = callStart({ idempotencyKey: 'k1' });
    await journal.begin(first);
    await journal.finish(first.id, callFinish({ status: 'failed', errorCode: 'tool_error', resultHash: null, resultBytes: null }));
    const second = callStart({ idempotencyKey: 'k1' });
    expect(await journal.begin(second)).toEqual({ kind: 'begun' });
    expect((await journal.findByIdempotencyKey('fs.write', 'k1'))?.id).toBe(second.id);
  });

  it('of many hosts racing one key, exactly one begins', async () => {
    const hosts = await Promise.all(Array.from({ length: 6 }, () => store().open()));
    const starts = hosts.map(() => callStart({ idempotencyKey: 'race' }));
    const outcomes = await Promise.all(hosts.map((host, i) => host.begin(starts[i]!)));
    expect(outcomes.filter((o) => o.kind === 'begun')).toHaveLength(1);
    const winner = starts[outcomes.findIndex((o) => o.kind === 'begun')]!;
    for (const outcome of outcomes) if (outcome.kind === 'held') expect(outcome.holder).toMatchObject({ id: winner.id, status: 'started' });
    expect(await hosts[0]!.query({ status: 'started' })).toHaveLength(1);
  });
});

describeEachStore('reconcile', (store) => {
  it('--rerun frees the key: the record stays interrupted, reconciled rerun', async () => {
    let journal = await store().open();
    const { start: start, journal: reopened } = await interruptedCall(store(), journal, { idempotencyKey: 'k1' });
    journal = reopened;
    const record = await journal.reconcile(start.id, 'rerun');
    expect(record).toMatchObject({ id: start.id, status: 'interrupted', reconciliation: 'rerun' });
    expect(record.reconciledAt).toBeTypeOf('number');
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toBeUndefined();
    // The rerun then completes and governs the key.
    const rerun = callStart({ idempotencyKey: 'k1', argsHash: start.argsHash });
    await journal.record(rerun, callFinish({ replay: '{"n":2}' }));
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toMatchObject({ id: rerun.id, status: 'completed', replay: '{"n":2}' });
  });

  it('--skip closes the key as done, without a result', async () => {
    let journal = await store().open();
    const { start: start, journal: reopened } = await interruptedCall(store(), journal, { idempotencyKey: 'k1' });
    journal = reopened;
    expect(await journal.reconcile(start.id, 'skip')).toMatchObject({ status: 'skipped', reconciliation: 'skip' });
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toEqual({
      id: start.id,
      status: 'skipped',
      argsHash: start.argsHash,
      replay: null,
      reconciliation: 'skip',
    });
  });

  it('refuses an unknown id, a call that is not interrupted, and a second decision', async () => {
    let journal = await store().open();
    expect((await rejection(() => journal.reconcile('nope', 'rerun'))).code).toBe('unknown_call');
    const done = callStart();
    await journal.record(done, callFinish());
    const notInterrupted = await rejection(() => journal.reconcile(done.id, 'skip'));
    expect(notInterrupted.code).toBe('not_interrupted');
    expect(notInterrupted.details).toEqual({ id: done.id, status: 'completed', reconciliation: null });
    const { start: start, journal: reopened } = await interruptedCall(store(), journal);
    journal = reopened;
    await journal.reconcile(start.id, 'rerun');
    const twice = await rejection(() => journal.reconcile(start.id, 'skip'));
    expect(twice.code).toBe('not_interrupted');
    expect(twice.details).toEqual({ id: start.id, status: 'interrupted', reconciliation: 'rerun' });
  });
});
