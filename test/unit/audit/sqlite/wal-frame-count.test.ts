// The count of the journal WAL's frames between reads of the wal-index
// (wal-frame-count.ts), through the SQLite store with its writer thread: lone
// batches committed on the host's connection are counted, and a write of any
// other kind, whichever path makes it, has the next batch read the wal-index.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { NewApproval } from '../../../../src/audit/journal.js';
import { hashArgs } from '../../../../src/audit/hash.js';
import { openSqliteStore, type SqliteStore } from '../../../../src/audit/sqlite/sqlite-store.js';
import { WalIndex } from '../../../../src/audit/sqlite/wal-index.js';
import { callFinish, callStart, makeTempParent } from '../../../helpers/journal-fixtures.js';

let temp: ReturnType<typeof makeTempParent>;
let store: SqliteStore;

const readOnly = () => callStart({ tool: 'fs.read', sideEffect: 'read_only' });

function approval(): NewApproval {
  const now = Date.now();
  const id = `approval-${Math.random().toString(16).slice(2)}`;
  const args = { env: 'prod' };
  return {
    id,
    tool: 'deploy',
    argsHash: hashArgs(args),
    sideEffect: 'remote_mutation',
    rule: 'policies/org.yaml:7 sideEffects.requireApproval',
    principal: 'ci-runner',
    sessionId: 'session-1',
    callId: `call-${id}`,
    createdAt: now,
    expiresAt: now + 60_000,
    arguments: args,
    effects: null,
  };
}

/** A read-only call alone in flight: its batch commits at once, and the store's read after it (if any) runs in the next check phase. */
async function lone(): Promise<void> {
  const done = store.recordSoon(readOnly(), callFinish(), true);
  await store.flush();
  await done;
  await new Promise((resolve) => setImmediate(resolve));
}

/** The store's reads of the wal-index over two lone batches after `write`, and over two before it. */
async function readsAround(write: () => Promise<unknown>): Promise<{ before: number; after: number }> {
  // The first batch reads the wal-index; the count starts from it.
  await lone();
  const reads = vi.spyOn(WalIndex.prototype, 'frames');
  try {
    await lone();
    await lone();
    const before = reads.mock.calls.length;
    await write();
    await lone();
    await lone();
    return { before, after: reads.mock.calls.length - before };
  } finally {
    reads.mockRestore();
  }
}

beforeEach(() => {
  temp = makeTempParent();
  store = openSqliteStore(temp.stateDir, { writeBatchesOffThread: true });
});

afterEach(async () => {
  await store.close();
  temp.remove();
});

describe('the WAL frame count', () => {
  it('lone batches alone are counted: no read of the wal-index', async () => {
    expect(await readsAround(async () => {})).toEqual({ before: 0, after: 0 });
  });

  // Through the store's own methods, and through what it hands out (its artifact store, its synchronous journal).
  const writes: [string, () => Promise<unknown>][] = [
    ['a write-ahead record (begin)', () => store.begin(callStart())],
    ['a one-shot record', () => store.record(callStart(), callFinish())],
    ['an artifact', () => store.putArtifact(new TextEncoder().encode('a large result'), 'text/plain')],
    ['a rate window taken', () => store.takeRate('ci-runner', [{ key: 'all', perMs: 60_000, calls: 10 }])],
    ['an approval created', () => store.createApproval(approval())],
    ['an artifact through the artifact store', async () => store.artifacts.put(new TextEncoder().encode('another result'), 'text/plain')],
    ['a record through the synchronous journal', async () => store.sync.record(callStart(), callFinish())],
    [
      'a batch of the writer thread',
      async () => {
        for (let row = 0; row < 5; row++) void store.recordSoon(readOnly(), callFinish());
        await store.flush();
        expect(store.recordWriter!.committedBatches).toBe(1);
      },
    ],
  ];

  it.each(writes)('%s: the next batch reads the wal-index once, the one after counts again', async (_name, write) => {
    const { before, after } = await readsAround(write);
    expect(before).toBe(0);
    expect(after).toBe(1);
  });

  it('a call finished: the next batch reads the wal-index', async () => {
    const start = callStart();
    await store.begin(start);
    expect(await readsAround(() => store.finish(start.id, callFinish()))).toEqual({ before: 0, after: 1 });
  });

  it('an approval decided, and one spent: each has the next batch read the wal-index', async () => {
    const asked = approval();
    const spent = approval();
    await store.createApproval(asked);
    await store.createApproval(spent);
    await store.decideApproval(spent.id, 'approved', 'alice');
    expect(await readsAround(() => store.decideApproval(asked.id, 'denied', 'bob'))).toEqual({ before: 0, after: 1 });
    expect(await readsAround(() => store.spendApproval(spent.id, 'deploy', spent.argsHash, 'call-spend'))).toMatchObject({ before: 0, after: 1 });
  });
});
