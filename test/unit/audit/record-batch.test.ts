// The batch behind Journal.recordSoon, with a recording write and vitest's fake
// timers (no real waiting): records queued within the delay go in one write,
// a full batch goes at once, writes keep their order, flush() writes what is
// queued, and a failed write is logged with its calls and does not stop the next.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { RecordBatch, type PendingRecord } from '../../../src/audit/record-batch.js';
import { callFinish, callStart } from './journal-fixtures.js';

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

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('RecordBatch', () => {
  it('commits the records queued within the delay in one write, after the delay', async () => {
    const sink = recordingWrite();
    const batch = new RecordBatch(sink.write, pendingId, capturingLogger().logger, 5, 100);
    const records = [pending(), pending(), pending()];
    for (const record of records) batch.add(record);
    expect(sink.batches).toEqual([]);
    expect(batch.pendingCount).toBe(3);
    await vi.advanceTimersByTimeAsync(5);
    expect(sink.batches).toEqual([records.map((record) => record.start.id)]);
    expect(batch.pendingCount).toBe(0);
  });

  it('commits a full batch at once, without waiting for the delay', async () => {
    const sink = recordingWrite();
    const batch = new RecordBatch(sink.write, pendingId, capturingLogger().logger, 1_000, 2);
    const [a, b, c] = [pending(), pending(), pending()];
    batch.add(a);
    batch.add(b);
    await Promise.resolve();
    expect(sink.batches).toEqual([[a.start.id, b.start.id]]);
    batch.add(c);
    await batch.flush();
    expect(sink.batches).toEqual([[a.start.id, b.start.id], [c.start.id]]);
  });

  it('flush writes what is queued, resolves once written, and keeps batches in order', async () => {
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
      5,
      100,
    );
    batch.add(pending());
    const first = batch.flush();
    batch.add(pending());
    batch.add(pending());
    const second = batch.flush();
    await vi.advanceTimersByTimeAsync(0);
    // The second batch waits for the first write to end.
    expect(order).toEqual(['begin 1']);
    release?.();
    await Promise.all([first, second]);
    expect(order).toEqual(['begin 1', 'end 1', 'begin 2', 'end 2']);
    // Nothing queued: flush resolves with nothing to write.
    await batch.flush();
    expect(order).toHaveLength(4);
  });

  it('a failed write is logged with the calls it held, and the next batch is still written', async () => {
    const sink = recordingWrite();
    const { logger, lines } = capturingLogger();
    const batch = new RecordBatch(sink.write, pendingId, logger, 5, 100);
    const lost = pending();
    sink.failNext(Object.assign(new Error('disk full'), { code: 'journal_write_failed' }));
    batch.add(lost);
    await batch.flush();
    expect(lines).toEqual([expect.objectContaining({ calls: [lost.start.id], err: expect.objectContaining({ message: 'disk full', code: 'journal_write_failed' }) })]);
    const next = pending();
    batch.add(next);
    await batch.flush();
    expect(sink.batches).toEqual([[next.start.id]]);
  });
});
