// The SQLite store's writer thread for read-only calls' batches (record-writer.ts):
// the thread commits them (not the host's connection), reads and other hosts see
// them after a flush, close loses none, and a thread that dies hands its batches
// back to the host's own connection. A batch of up to four records is the host
// connection's. When the WAL is due for a checkpoint, the checkpoint thread
// (wal-checkpointer.ts) checkpoints it beside the commits; the writer thread does
// with a batch only when that thread is gone. The tests of the thread's batches
// send it every batch (inlineBatchMax 0).
import { statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../../../../src/audit/sqlite/sqlite-store.js';
import { WalIndex } from '../../../../src/audit/sqlite/wal-index.js';
import { recordingLogger } from '../../../helpers/recording-logger.js';
import { callFinish, callStart, makeTempParent } from '../../../helpers/journal-fixtures.js';

let temp: ReturnType<typeof makeTempParent>;
const stores: SqliteStore[] = [];

function open(options: Parameters<typeof openSqliteStore>[1] = {}): SqliteStore {
  const store = openSqliteStore(temp.stateDir, options);
  stores.push(store);
  return store;
}

const readOnly = () => callStart({ tool: 'fs.read', sideEffect: 'read_only' });

beforeEach(() => {
  temp = makeTempParent();
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  temp.remove();
});

describe('read-only batches on the writer thread', () => {
  it('the thread commits them; the host and another host read them after a flush', async () => {
    const store = open({ writeBatchesOffThread: true, inlineBatchMax: 0 });
    const writer = store.recordWriter;
    expect(writer).toBeDefined();
    const starts = Array.from({ length: 20 }, readOnly);
    // Queued without awaiting: the test awaits what commits the batch (flush(), close() or a read).
    for (const start of starts) void store.recordSoon(start, callFinish());
    await store.flush();
    expect(writer!.committedBatches).toBeGreaterThan(0);
    expect(await store.get(starts[19]!.id)).toMatchObject({ status: 'completed', sideEffect: 'read_only', hostId: store.hostId });
    const other = open({ asHost: false });
    expect((await other.query({ tool: 'fs.read' })).map((record) => record.id).sort()).toEqual(starts.map((start) => start.id).sort());
  });

  it('the thread stores field for field the record the host connection stores', async () => {
    const store = open({ writeBatchesOffThread: true, inlineBatchMax: 0 });
    const finish = callFinish({ status: 'failed', errorCode: 'tool_error', resultBytes: 9, egressAdmitted: 2, egressRefused: 5 });
    const byHost = callStart({ tool: 'fs.read', sideEffect: 'read_only', principal: 'ci-bot', approval: 'approved' });
    const byThread = { ...byHost, id: `${byHost.id}-thread` };
    await store.record(byHost, finish);
    void store.recordSoon(byThread, finish);
    await store.flush();
    expect(store.recordWriter!.committedBatches).toBe(1);
    expect(await store.get(byThread.id)).toEqual({ ...(await store.get(byHost.id)), id: byThread.id });
  });

  it('close commits every queued record first', async () => {
    const store = open({ writeBatchesOffThread: true, inlineBatchMax: 0 });
    const starts = Array.from({ length: 300 }, readOnly);
    for (const start of starts) void store.recordSoon(start, callFinish());
    await store.close();
    const reader = open({ asHost: false });
    const ids = new Set((await reader.query({ tool: 'fs.read' })).map((record) => record.id));
    expect(starts.filter((start) => !ids.has(start.id))).toEqual([]);
  });

  it('a thread that dies hands its batches to the host connection: nothing is lost', async () => {
    const log = recordingLogger();
    const store = open({ writeBatchesOffThread: true, inlineBatchMax: 0, logger: log.logger });
    const writer = store.recordWriter!;
    const before = readOnly();
    void store.recordSoon(before, callFinish());
    await store.flush();
    expect(writer.committedBatches).toBe(1);
    // Stopped as a crash would stop it: the batch queued meanwhile still lands.
    const exited = new Promise((resolve) => writer.thread.once('exit', resolve));
    const during = readOnly();
    void store.recordSoon(during, callFinish());
    const flushed = store.flush();
    await writer.thread.terminate();
    await exited;
    await flushed;
    // `during` may have been committed by the thread just before it stopped, or by the host after.
    const committedByThread = writer.committedBatches;
    const after = readOnly();
    void store.recordSoon(after, callFinish());
    await store.flush();
    for (const start of [before, during, after]) expect(await store.get(start.id)).toMatchObject({ status: 'completed' });
    expect(writer.committedBatches).toBe(committedByThread);
    expect(log.lines().some((line) => line['msg'] === 'journal writer thread stopped: batches are written on the host thread')).toBe(true);
  });

  it('a failed batch is refused as a whole and logged, as a failed write on the host is', async () => {
    const log = recordingLogger();
    const store = open({ writeBatchesOffThread: true, inlineBatchMax: 0, logger: log.logger });
    const start = readOnly();
    void store.recordSoon(start, callFinish());
    await store.flush();
    // The same id again: the UNIQUE constraint refuses the batch in the thread.
    const fresh = readOnly();
    void store.recordSoon(fresh, callFinish());
    void store.recordSoon(start, callFinish());
    await store.flush();
    expect(await store.get(fresh.id)).toBeUndefined();
    expect(store.recordWriter!.committedBatches).toBe(1);
    const failed = log.lines().find((line) => line['msg'] === 'journal: could not write a batch of read-only call records');
    expect(failed).toMatchObject({ err: { code: 'SQLITE_CONSTRAINT_UNIQUE' }, calls: [fresh.id, start.id] });
  });

  it('batches of every size land whole, field for field and in the order queued (the thread inserts them 64, 16, 4 and 1 rows per statement)', async () => {
    const store = open({ writeBatchesOffThread: true, inlineBatchMax: 0 });
    const finish = callFinish({ status: 'failed', errorCode: 'tool_error', resultBytes: 9, egressAdmitted: 2, egressRefused: 5 });
    const { replay: _notKept, ...ended } = finish; // a record keeps no replay unless the call had an idempotency key
    const queued: string[] = [];
    let batches = 0;
    for (const size of [1, 3, 4, 5, 17, 63, 64, 65, 85, 127, 128]) {
      const starts = Array.from({ length: size }, (_, i) => callStart({ tool: 'fs.read', sideEffect: 'read_only', principal: i % 2 === 0 ? null : `p-${i}` }));
      for (const start of starts) void store.recordSoon(start, finish);
      await store.flush();
      batches++;
      queued.push(...starts.map((start) => start.id));
      for (const start of [starts[0]!, starts[Math.floor(size / 2)]!, starts[size - 1]!]) {
        expect(await store.get(start.id)).toEqual({ ...start, ...ended, hostId: store.hostId, reconciliation: null, reconciledAt: null });
      }
    }
    expect(store.recordWriter!.committedBatches).toBe(batches);
    const inSeqOrder = store.sync.database.prepare('SELECT id FROM calls ORDER BY seq').pluck().all();
    expect(inSeqOrder).toEqual(queued);
  });

  it('a row refused in a later statement of a batch takes back the rows of its earlier statements too', async () => {
    const log = recordingLogger();
    const store = open({ writeBatchesOffThread: true, inlineBatchMax: 0, logger: log.logger });
    // 100 rows go in as 64 + 16 + 16 + 4: row 90 (third statement) repeats row 5's id (first statement).
    const starts = Array.from({ length: 100 }, readOnly);
    starts[90] = { ...starts[90]!, id: starts[5]!.id };
    for (const start of starts) void store.recordSoon(start, callFinish());
    await store.flush();
    expect(store.recordWriter!.committedBatches).toBe(0);
    expect(await store.query({ tool: 'fs.read' })).toEqual([]);
    const failed = log.lines().find((line) => line['msg'] === 'journal: could not write a batch of read-only call records');
    expect(failed).toMatchObject({ err: { code: 'SQLITE_CONSTRAINT_UNIQUE' } });
  });

  it('a batch of up to four records is committed on the host connection; larger ones on the thread', async () => {
    const store = open({ writeBatchesOffThread: true });
    const few = Array.from({ length: 4 }, readOnly);
    for (const start of few) void store.recordSoon(start, callFinish());
    await store.flush();
    expect(store.recordWriter!.committedBatches).toBe(0);
    const more = Array.from({ length: 5 }, readOnly);
    for (const start of more) void store.recordSoon(start, callFinish());
    await store.flush();
    expect(store.recordWriter!.committedBatches).toBe(1);
    for (const start of [...few, ...more]) expect(await store.get(start.id)).toMatchObject({ status: 'completed', hostId: store.hostId });
  });

  it('once the WAL is due for a checkpoint, the checkpoint thread checkpoints it beside the commits: the WAL starts over in a file kept at its size', async () => {
    const store = open({ writeBatchesOffThread: true, checkpointWalFrames: 40 });
    const checkpointer = store.walCheckpointer!;
    const wal = () => statSync(`${store.sync.file}-wal`).size;
    const starts: ReturnType<typeof readOnly>[] = [];
    while (store.pendingWalFrames()! < 40) {
      const start = readOnly();
      starts.push(start);
      void store.recordSoon(start, callFinish());
      await store.flush();
    }
    expect(checkpointer.completedCheckpoints).toBe(0);
    // The batch that finds the WAL due is committed as any other (here on the host connection), the checkpoint runs on its thread.
    const due = readOnly();
    void store.recordSoon(due, callFinish());
    await store.flush();
    await checkpointer.idle();
    expect(checkpointer.completedCheckpoints).toBe(1);
    expect(store.recordWriter!.committedBatches).toBe(0);
    expect(store.pendingWalFrames()).toBe(0);
    const grown = wal();
    // Checkpointed: the next commit writes the WAL from its start, over the blocks the file has (neither grown nor cut).
    const next = readOnly();
    void store.recordSoon(next, callFinish());
    await store.flush();
    expect(store.pendingWalFrames()).toBeGreaterThan(0);
    expect(store.pendingWalFrames()).toBeLessThan(40);
    expect(wal()).toBe(grown);
    for (const start of [...starts, due, next]) expect(await store.get(start.id)).toMatchObject({ status: 'completed' });
  });

  it('under a steady load the WAL still starts over: from three intervals of frames the store waits for the checkpoint', async () => {
    const store = open({ writeBatchesOffThread: true, checkpointWalFrames: 40, inlineBatchMax: 0 });
    const index = new WalIndex(store.sync.file);
    const starts: ReturnType<typeof readOnly>[] = [];
    let most = 0;
    let startedOver = 0;
    let before = 0;
    // Each batch is awaited, the checkpoints are not: commits run beside them.
    for (let batch = 0; batch < 120; batch++) {
      const some = Array.from({ length: 5 }, readOnly);
      starts.push(...some);
      for (const start of some) void store.recordSoon(start, callFinish());
      await store.flush();
      const total = index.frames()!.total;
      if (total < before) startedOver++;
      before = total;
      most = Math.max(most, total);
    }
    expect(store.walCheckpointer!.completedCheckpoints).toBeGreaterThan(3);
    expect(startedOver).toBeGreaterThan(1);
    // Three intervals, and what was committed while the last checkpoint beside the commits ran (a batch is ~6 frames).
    expect(most).toBeLessThan(3 * 40 + 60);
    const ids = new Set((await store.query({ tool: 'fs.read' })).map((record) => record.id));
    expect(starts.filter((start) => !ids.has(start.id))).toEqual([]);
  });

  it('lone batches count their frames instead of reading the wal-index after each; any other write of the host reads it again', async () => {
    const store = open({ writeBatchesOffThread: true });
    const reads = vi.spyOn(WalIndex.prototype, 'frames');
    // A read-only call alone in flight: its batch commits at once, and the store's read after it (if any) runs in the next check phase.
    const lone = async (): Promise<void> => {
      const done = store.recordSoon(readOnly(), callFinish(), true);
      await store.flush();
      await done;
      await new Promise((resolve) => setImmediate(resolve));
    };
    try {
      for (let batch = 0; batch < 32; batch++) await lone();
      // Read at the first batch, then once every 16 batches: not 32 reads.
      expect(reads.mock.calls.length).toBeLessThanOrEqual(3);
      const counted = reads.mock.calls.length;
      await store.begin(callStart());
      await lone();
      expect(reads.mock.calls.length).toBe(counted + 1);
    } finally {
      reads.mockRestore();
    }
    expect(store.recordWriter!.committedBatches).toBe(0);
    expect(store.pendingWalFrames()).toBeGreaterThan(32 * 6);
  });

  it('a checkpoint thread that dies loses nothing: the writer thread checkpoints with its batches again', async () => {
    const log = recordingLogger();
    const store = open({ writeBatchesOffThread: true, checkpointWalFrames: 40, logger: log.logger });
    const checkpointer = store.walCheckpointer!;
    const exited = new Promise((resolve) => checkpointer.thread.once('exit', resolve));
    await checkpointer.thread.terminate();
    await exited;
    expect(checkpointer.isAvailable).toBe(false);
    const starts: ReturnType<typeof readOnly>[] = [];
    while (store.pendingWalFrames()! < 40) {
      const start = readOnly();
      starts.push(start);
      void store.recordSoon(start, callFinish());
      await store.flush();
    }
    expect(store.recordWriter!.committedBatches).toBe(0);
    const due = readOnly();
    void store.recordSoon(due, callFinish());
    await store.flush();
    expect(store.recordWriter!.committedBatches).toBe(1);
    expect(store.pendingWalFrames()).toBe(0);
    for (const start of [...starts, due]) expect(await store.get(start.id)).toMatchObject({ status: 'completed' });
    expect(log.lines().some((line) => line['msg'] === 'journal checkpoint thread stopped: the writer thread checkpoints the WAL')).toBe(true);
  });

  it('a store opened again in the same process reads the WAL its new connection writes', async () => {
    const first = open({ writeBatchesOffThread: true });
    void first.recordSoon(readOnly(), callFinish());
    await first.flush();
    expect(first.pendingWalFrames()).toBeGreaterThan(0);
    // The last connection to close deletes the wal-index; the next open makes a new one.
    await first.close();
    const again = open({ writeBatchesOffThread: true });
    const before = again.pendingWalFrames()!;
    void again.recordSoon(readOnly(), callFinish());
    await again.flush();
    expect(again.pendingWalFrames()).toBeGreaterThan(before);
  });

  it('without the option the host connection writes them (no thread)', async () => {
    const store = open();
    expect(store.recordWriter).toBeUndefined();
    const start = readOnly();
    void store.recordSoon(start, callFinish());
    await store.flush();
    expect(await store.get(start.id)).toMatchObject({ status: 'completed' });
  });
});
