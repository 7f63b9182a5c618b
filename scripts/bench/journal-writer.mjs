// Bench row: the SQLite journal's own threads, CPU per read-only call record: the
// writer thread (src/audit/sqlite/record-writer.ts) and the WAL checkpoint thread
// (wal-checkpointer.ts), counted together since every record costs both. The store
// is opened as `serve` opens it (batches committed on the writer thread), fed
// batches of 60 records with ids from the host's own generator (60: what 8 calls in
// flight at ~6k calls/s queue in the 10 ms batch delay), on a journal already
// holding 30k calls. The threads' CPU is read from /proc/self/task/TID/schedstat
// (Linux): they are the tasks the store's opening added to this process.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { round } from './lib.mjs';

const BATCH = 60;
/** The threads a store opened as serve opens it starts: the writer and the WAL checkpointer. */
const JOURNAL_THREADS = 2;

/** Median CPU µs per record of the journal's threads, and what was measured; `smoke`: a handful of batches (the suite's bench check). */
export async function benchWriterThread(scratch, smoke = false) {
  const PREFILL_RECORDS = smoke ? 600 : 30_000;
  const ROUNDS = smoke ? 1 : 5;
  const BATCHES_PER_ROUND = smoke ? 5 : 40;
  const { openSqliteStore } = await import('../../dist/src/audit/sqlite/sqlite-store.js');
  const { newCallId } = await import('../../dist/src/supervisor/call-id.js');
  const tasks = () => new Set(readdirSync('/proc/self/task'));
  const before = tasks();
  const store = openSqliteStore(join(scratch, 'writer-thread-state'), { sessionId: 'bench', writeBatchesOffThread: true });
  let n = 0;
  const push = async (batches) => {
    for (let b = 0; b < batches; b++) {
      for (let i = 0; i < BATCH; i++) {
        n++;
        const hash = n.toString(16).padStart(64, '0');
        const now = Date.now();
        store.recordSoon(
          {
            id: newCallId(),
            sessionId: 'bench',
            principal: null,
            tool: 'echo_worker',
            argsHash: hash,
            sideEffect: 'read_only',
            decision: 'allow',
            rule: 'bench/policy.yaml:3 sideEffects.allow',
            approval: 'not_needed',
            idempotencyKey: null,
            startedAt: now,
          },
          { status: 'completed', errorCode: null, resultHash: hash, resultBytes: 31, replay: null, endedAt: now },
        );
      }
      await store.flush();
    }
  };
  try {
    await push(1); // the threads are up once the first batch is committed
    const added = [...tasks()].filter((tid) => !before.has(tid));
    if (added.length !== JOURNAL_THREADS) {
      return { unavailable: `expected ${JOURNAL_THREADS} new threads (the writer and the WAL checkpointer), found ${added.length}` };
    }
    const taskCpuNs = (tid) => Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    const cpuNs = () => added.reduce((sum, tid) => sum + taskCpuNs(tid), 0);
    await push(Math.ceil(PREFILL_RECORDS / BATCH));
    const perRecord = [];
    for (let r = 0; r < ROUNDS; r++) {
      const start = cpuNs();
      await push(BATCHES_PER_ROUND);
      perRecord.push((cpuNs() - start) / 1000 / (BATCHES_PER_ROUND * BATCH));
    }
    perRecord.sort((a, b) => a - b);
    return { batch: BATCH, journalCalls: PREFILL_RECORDS, threads: added.length, cpuUsPerRecord: round(perRecord[Math.floor(perRecord.length / 2)], 1) };
  } finally {
    await store.close();
  }
}
