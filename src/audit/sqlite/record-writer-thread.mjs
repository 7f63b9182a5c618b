// The thread that commits batches of read-only calls' records (record-writer.ts):
// its own connection to the journal file, so SQLite's work and the file writes
// (and a checkpoint's fsync) run beside the host's event loop instead of on it.
// Plain JavaScript on purpose: the same file runs from src/ (tests) and dist/.
// It knows nothing of the schema: the host sends the INSERT and the rows.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, busyTimeoutMs, insertSql } = workerData;
// The host's connection made the file (WAL is a property of the file); this one only writes to it.
const db = new Database(file, { timeout: busyTimeoutMs, fileMustExist: true });
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
const insert = db.prepare(insertSql);
const insertAll = db.transaction((rows) => {
  for (const row of rows) insert.run(row);
});

parentPort.on('message', (message) => {
  if (message.type === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    insertAll(message.rows);
    parentPort.postMessage({ id: message.id, ok: true });
  } catch (error) {
    parentPort.postMessage({ id: message.id, ok: false, message: String(error?.message ?? error), code: typeof error?.code === 'string' ? error.code : undefined });
  }
});
parentPort.postMessage({ type: 'ready' });
