// The thread that checkpoints the journal's WAL when the host asks
// (wal-checkpointer.ts): a connection of its own that only copies the WAL back
// into the database, so the writer thread (record-writer-thread.mjs) and the
// host's connection keep committing while it runs. PASSIVE: it never waits
// for a writer or a reader, it copies what it can.
// Plain JavaScript on purpose: the same file runs from src/ (tests) and dist/.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs, fileMustExist: true });
// The page cache of the host's connection (open-database.ts), though a checkpoint copies the WAL's
// frames without it.
db.pragma(`cache_size = -${workerData.pageCacheKib}`);

parentPort.on('message', (message) => {
  if (message.type === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error?.message ?? error), code: typeof error?.code === 'string' ? error.code : undefined });
  }
});
