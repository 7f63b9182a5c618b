// The group commit behind Journal.recordSoon, with a recording write: the
// records of one event-loop turn go in one write, each caller's promise settles
// with that write (resolved once committed, rejected when it failed), a full
// batch goes at once, writes keep their order, and a failed write is logged
// with its calls and does not stop the next.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { RecordBatch, type PendingRecord } from '../../../src/audit/record-batch.js';
import { callFinish, callStart } from '../../helpers/journal-fixtures.js';

const pending = (): PendingRecord => ({ start: callStart({ sideEffect: 'read_only' }), finish: callFinish() });
const pendingId = (record: PendingRecord): string => record.start.id;

function recordingWrite() {
  const batches: string[][] = [];
  let fail: Error | undefined;
  return {
    batches,
    failNext(error: Error) {
      fail = error;
    },
    write: (records: readonly PendingRecord[]) => {
      if (fail) {
        const error = fail;
        fail = undefined;
        throw error;
      }
      batches.push(records.map((record) => record.start.id));
    },
  };
}

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('RecordBatch (group commit)', () => {
  it('commits the records of one event-loop turn in one write, at the end of the turn', async () => {
    const sink = recordingWrite();
    const batch = new RecordBatch(sink.write, pendingId, capturingLogger().logger, 100);
    const records = [pending(), pending(), pending()];
    const committed = records.map((record) => batch.add(record));
    expect(sink.batches).toEqual([]);
    expect(batch.pendingCount).toBe(3);
    await Promise.all(committed);
    expect(sink.batches).toEqual([records.map((record) => record.start.id)]);
    expect(batch.pendingCount).toBe(0);
  });

  it('a record added `now` (its call the only one in flight) is written at once, not at the end of the turn', async () => {
    const sink = recordingWrite();
    const batch = new RecordBatch(sink.write, pendingId, capturingLogger().logger, 100);
    let turnOver = false;
    setImmediate(() => (turnOver = true));
    const alone = pending();
    await batch.add(alone, true);
    expect(turnOver).toBe(false);
    expect(sink.batches).toEqual([[alone.start.id]]);
    const later = pending();
    await batch.add(later);
    expect(turnOver).toBe(true);
    expect(sink.batches).toEqual([[alone.start.id], [later.start.id]]);
  });

  it("a caller's promise resolves only once its batch is written", async () => {
    const order: string[] = [];
    let release: (() => void) | undefined;
    const batch = new RecordBatch(
      async () => {
        order.push('write started');
        await new Promise<void>((resolve) => (release = resolve));
        order.push('write committed');
      },
      pendingId,
      capturingLogger().logger,
      100,
    );
    const answered = batch.add(pending()).then(() => order.push('answer'));
    await nextTurn();
    expect(order).toEqual(['write started']);
    release?.();
    await answered;
    expect(order).toEqual(['write started', 'write committed', 'answer']);
  });

  it('commits a full batch at once, without waiting for the end of the turn', async () => {
    const sink = recordingWrite();
    const batch = new RecordBatch(sink.write, pendingId, capturingLogger().logger, 2);
    const [a, b, c] = [pending(), pending(), pending()];
    void batch.add(a);
    void batch.add(b);
    await Promise.resolve();
    expect(sink.batches).toEqual([[a.start.id, b.start.id]]);
    await batch.add(c);
    expect(sink.batches).toEqual([[a.start.id, b.start.id], [c.start.id]]);
  });

  it('keeps batches in order: the next write starts after the one before it settled', async () => {
    const order: string[] = [];
    let release: (() => void) | undefined;
    const batch = new RecordBatch(
      async (records) => {
        order.push(`begin ${records.length}`);
        if (release === undefined) await new Promise<void>((resolve) => (release = resolve));
        order.push(`end ${records.length}`);
      },
      pendingId,
      capturingLogger().logger,
      100,
    );
    void batch.add(pending());
    const first = batch.flush();
    void batch.add(pending());
    void batch.add(pending());
    const second = batch.flush();
    await nextTurn();
    expect(order).toEqual(['begin 1']);
    expect(batch.isWriting).toBe(true);
    release?.();
    await Promise.all([first, second]);
    expect(order).toEqual(['begin 1', 'end 1', 'begin 2', 'end 2']);
    expect(batch.isWriting).toBe(false);
  });

  it('a failed write rejects its callers, is logged with the calls it held, and the next batch is still written', async () => {
    const sink = recordingWrite();
    const { logger, lines } = capturingLogger();
    const batch = new RecordBatch(sink.write, pendingId, logger, 100);
    const lost = pending();
    const full = Object.assign(new Error('disk full'), { code: 'journal_write_failed' });
    sink.failNext(full);
    await expect(batch.add(lost)).rejects.toBe(full);
    expect(lines).toEqual([expect.objectContaining({ calls: [lost.start.id], err: expect.objectContaining({ message: 'disk full', code: 'journal_write_failed' }) })]);
    const next = pending();
    await batch.add(next);
    expect(sink.batches).toEqual([[next.start.id]]);
  });

  it('a failed batch nobody waits for is not an unhandled rejection', async () => {
    const sink = recordingWrite();
    const batch = new RecordBatch(sink.write, pendingId, capturingLogger().logger, 100);
    sink.failNext(new Error('gone'));
    void batch.add(pending());
    await batch.flush();
    // vitest fails the file on an unhandled rejection; reaching here after the flush is the check.
    expect(sink.batches).toEqual([]);
  });
});
