// The journal's behaviour through its interface, on both stores (SQLite and
// PostgreSQL): recording calls, queries, the reader mode, close. Store
// specifics live in sqlite/ and postgres/.
import { expect, it } from 'vitest';
import { callFinish, callStart } from '../../helpers/journal-fixtures.js';
import { describeEachStore, rejection } from '../../helpers/journal-stores.js';

describeEachStore('recording calls', (store) => {
  it('keeps the principal of an HTTP call, and null for stdio', async () => {
    const journal = await store().open();
    const overHttp = callStart({ principal: 'ci-bot' });
    const overStdio = callStart();
    await journal.record(overHttp, callFinish());
    await journal.record(overStdio, callFinish());
    expect((await journal.get(overHttp.id))?.principal).toBe('ci-bot');
    expect((await journal.get(overStdio.id))?.principal).toBeNull();
  });

  it('keeps the principal of a write-ahead record through finish, and in query', async () => {
    const journal = await store().open();
    const start = callStart({ principal: 'alice', idempotencyKey: 'k-principal' });
    await journal.begin(start);
    expect((await journal.get(start.id))?.principal).toBe('alice');
    await journal.finish(start.id, callFinish());
    expect(await journal.query()).toEqual([expect.objectContaining({ id: start.id, principal: 'alice', status: 'completed' })]);
  });

  it('begin writes a started record that finish completes', async () => {
    const journal = await store().open({ sessionId: 'session-1' });
    const start = callStart({ idempotencyKey: 'k1' });
    expect(await journal.begin(start)).toEqual({ kind: 'begun' });
    expect(await journal.get(start.id)).toMatchObject({ ...start, status: 'started', endedAt: null, hostId: journal.hostId });
    const finish = callFinish({ replay: '{"content":[]}' });
    await journal.finish(start.id, finish);
    expect(await journal.get(start.id)).toMatchObject({
      status: 'completed',
      errorCode: null,
      resultHash: finish.resultHash,
      resultBytes: finish.resultBytes,
      endedAt: finish.endedAt,
    });
  });

  it('record writes a call refused before it ran', async () => {
    const journal = await store().open();
    const start = callStart({ decision: 'deny', rule: 'policies/org.yaml:12 sideEffects.deny' });
    await journal.record(start, callFinish({ status: 'denied', errorCode: 'policy_denied', resultHash: null, resultBytes: null }));
    expect(await journal.get(start.id)).toMatchObject({ status: 'denied', errorCode: 'policy_denied', rule: start.rule, decision: 'deny' });
  });

  it('refuses a second record with the same id', async () => {
    const journal = await store().open();
    const start = callStart();
    await journal.begin(start);
    expect((await rejection(() => journal.begin(start))).code).toBe('journal_write_failed');
  });

  it('refuses finish on an unknown id', async () => {
    const journal = await store().open();
    const error = await rejection(() => journal.finish('nope', callFinish()));
    expect(error).toEqual({ code: 'unknown_call', details: { id: 'nope' } });
  });

  it('a reader opened with asHost false records nothing', async () => {
    await (await store().open()).close();
    const reader = await store().open({ asHost: false });
    expect(reader.hostId).toBeNull();
    expect((await rejection(() => reader.begin(callStart()))).code).toBe('journal_read_only');
  });

  it('close marks its own still-started calls interrupted and refuses later use', async () => {
    const journal = await store().open();
    const start = callStart();
    await journal.begin(start);
    await journal.close();
    await journal.close();
    expect((await rejection(() => journal.get(start.id))).code).toBe('journal_closed');
    expect((await (await store().open()).get(start.id))?.status).toBe('interrupted');
  });

  it('reopens an existing journal without migrating it again', async () => {
    const first = await store().open();
    const start = callStart();
    await first.record(start, callFinish());
    await first.close();
    expect((await (await store().open()).get(start.id))?.status).toBe('completed');
  });

  it('leaves the started calls of a live host alone', async () => {
    const first = await store().open();
    const start = callStart();
    await first.begin(start);
    const second = await store().open();
    expect((await second.get(start.id))?.status).toBe('started');
    await first.finish(start.id, callFinish());
    expect((await second.get(start.id))?.status).toBe('completed');
  });

  it('says where it lives without a password', async () => {
    const journal = await store().open();
    expect(journal.kind).toBe(store().name);
    expect(journal.location).toMatch(store().name === 'sqlite' ? /^sqlite:\// : /^postgres:\/\//);
  });
});

describeEachStore('query', (store) => {
  it('filters by tool, status and since, newest first, with a limit', async () => {
    const journal = await store().open();
    const t0 = Date.parse('2026-11-29T10:00:00Z');
    const a = callStart({ tool: 'fs.read', startedAt: t0 });
    const b = callStart({ tool: 'fs.write', startedAt: t0 + 1000 });
    const c = callStart({ tool: 'fs.write', startedAt: t0 + 2000 });
    await journal.record(a, callFinish({ endedAt: t0 + 5 }));
    await journal.record(b, callFinish({ status: 'failed', errorCode: 'timeout', endedAt: t0 + 1500 }));
    await journal.begin(c);
    const ids = async (filter?: Parameters<typeof journal.query>[0]) => (await journal.query(filter)).map((r) => r.id);
    expect(await ids()).toEqual([c.id, b.id, a.id]);
    expect(await ids({ tool: 'fs.write' })).toEqual([c.id, b.id]);
    expect(await ids({ status: 'failed' })).toEqual([b.id]);
    expect(await ids({ since: t0 + 1000 })).toEqual([c.id, b.id]);
    expect(await ids({ limit: 1 })).toEqual([c.id]);
    expect(await ids({ tool: 'fs.write', status: 'started' })).toEqual([c.id]);
  });
});

describeEachStore('read-only records in a batch (recordSoon)', (store) => {
  const readOnly = () => callStart({ tool: 'fs.read', sideEffect: 'read_only' });

  it('a read of the same journal sees queued records (it flushes first)', async () => {
    const journal = await store().open();
    const starts = [readOnly(), readOnly(), readOnly()];
    // Queued without awaiting: the test awaits what commits the batch (flush(), close() or a read).
    for (const start of starts) void journal.recordSoon(start, callFinish());
    expect(await journal.get(starts[0]!.id)).toMatchObject({ status: 'completed', sideEffect: 'read_only', hostId: journal.hostId });
    void journal.recordSoon(readOnly(), callFinish({ status: 'failed', errorCode: 'tool_error', resultHash: null, resultBytes: null }));
    expect((await journal.query({ tool: 'fs.read' })).map((record) => record.status).sort()).toEqual(['completed', 'completed', 'completed', 'failed']);
  });

  it('another host sees them once flush() resolves', async () => {
    const writer = await store().open();
    const other = await store().open();
    const start = readOnly();
    void writer.recordSoon(start, callFinish());
    await writer.flush();
    expect(await other.get(start.id)).toMatchObject({ status: 'completed', hostId: writer.hostId });
  });

  it('close writes every queued record first: a graceful stop loses nothing', async () => {
    const journal = await store().open();
    const starts = Array.from({ length: 300 }, readOnly);
    for (const start of starts) void journal.recordSoon(start, callFinish());
    // No flush, no read: close alone must commit them.
    await journal.close();
    const reader = await store().open({ asHost: false });
    const ids = new Set((await reader.query({ tool: 'fs.read' })).map((record) => record.id));
    expect(starts.filter((start) => !ids.has(start.id))).toEqual([]);
  });

  it('refuses at once on a reader and after close', async () => {
    await (await store().open()).close();
    const reader = await store().open({ asHost: false });
    expect(() => reader.recordSoon(readOnly(), callFinish())).toThrow(expect.objectContaining({ code: 'journal_read_only' }));
    const journal = await store().open();
    await journal.close();
    expect(() => journal.recordSoon(readOnly(), callFinish())).toThrow(expect.objectContaining({ code: 'journal_closed' }));
  });
});

// Every write path builds its row from the same start and finish (call-row.ts): a
// value in the wrong column, or a default that differs between paths, shows here.
describeEachStore('every write path stores the same record', (store) => {
  const start = (overrides: Parameters<typeof callStart>[0] = {}) =>
    callStart({
      principal: 'ci-bot',
      tool: 'fs.read',
      sideEffect: 'read_only',
      decision: 'would_deny',
      rule: 'p.yaml:7 tools.fs.read',
      approval: 'approved',
      startedAt: 1_700_000_000_123,
      ...overrides,
    });
  const finish = callFinish({
    status: 'failed',
    errorCode: 'tool_error',
    resultHash: 'c'.repeat(64),
    resultBytes: 77,
    endedAt: 1_700_000_000_456,
    egressAdmitted: 3,
    egressRefused: 4,
  });
  const expected = (from: ReturnType<typeof start>, hostId: string | null) => ({
    ...from,
    hostId,
    status: 'failed',
    errorCode: 'tool_error',
    resultHash: 'c'.repeat(64),
    resultBytes: 77,
    endedAt: 1_700_000_000_456,
    reconciliation: null,
    reconciledAt: null,
    egressAdmitted: 3,
    egressRefused: 4,
  });

  it('record, recordSoon and begin + finish give field-for-field the same record', async () => {
    const journal = await store().open({ sessionId: 'session-1' });
    const recorded = start();
    const queued = start();
    const begun = start({ sideEffect: 'write', idempotencyKey: 'k-same-record' });
    await journal.record(recorded, finish);
    void journal.recordSoon(queued, finish);
    await journal.begin(begun);
    expect(await journal.get(begun.id)).toEqual({
      ...begun,
      hostId: journal.hostId,
      status: 'started',
      errorCode: null,
      resultHash: null,
      resultBytes: null,
      endedAt: null,
      reconciliation: null,
      reconciledAt: null,
      egressAdmitted: null,
      egressRefused: null,
    });
    await journal.finish(begun.id, finish);
    await journal.flush();
    const reader = await store().open({ asHost: false });
    for (const from of [recorded, queued, begun]) expect(await reader.get(from.id)).toEqual(expected(from, journal.hostId));
  });

  it('absent egress counts are stored as 0 on every path', async () => {
    const journal = await store().open();
    const { egressAdmitted: _admitted, egressRefused: _refused, ...withoutEgress } = finish;
    const recorded = start();
    const queued = start();
    await journal.record(recorded, withoutEgress);
    void journal.recordSoon(queued, withoutEgress);
    await journal.flush();
    for (const from of [recorded, queued]) expect(await journal.get(from.id)).toMatchObject({ egressAdmitted: 0, egressRefused: 0 });
  });
});
