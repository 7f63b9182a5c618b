// The thread that commits batches of read-only calls' records (record-writer.ts):
// its own connection to the journal file, so SQLite's work and the file writes
// (and a checkpoint's fsync) run beside the host's event loop instead of on it.
// Plain JavaScript on purpose: the same file runs from src/ (tests) and dist/.
// It knows nothing of the schema: the host sends the INSERT's head, one row's
// placeholders and the rows.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, busyTimeoutMs, insert } = workerData;
// The host's connection made the file (WAL is a property of the file); this one only writes to it.
const db = new Database(file, { timeout: busyTimeoutMs, fileMustExist: true });
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');

// A batch goes in as a few multi-row INSERTs (up to 64 rows each) rather than
// one statement per row: each statement run has a fixed cost (the call into
// the addon, SQLite's reset and its VDBE start) that one row per run paid in
// full. The chunk sizes are fixed so a handful of prepared statements serve
// every batch size (60 rows: 3 x 16 + 3 x 4).
const CHUNK_SIZES = [64, 16, 4, 1];
/** Per chunk size: its statement and a parameter array reused from batch to batch. */
const chunks = new Map();

function chunkOf(size) {
  let chunk = chunks.get(size);
  if (chunk === undefined) {
    const sql = insert.head + Array.from({ length: size }, () => insert.row).join(', ');
    chunk = { statement: db.prepare(sql), params: new Array(size * insert.arity) };
    chunks.set(size, chunk);
  }
  return chunk;
}

const insertAll = db.transaction((rows) => {
  let at = 0;
  for (const size of CHUNK_SIZES) {
    while (rows.length - at >= size) {
      const { statement, params } = chunkOf(size);
      let p = 0;
      for (let r = at; r < at + size; r++) {
        const row = rows[r];
        for (let v = 0; v < insert.arity; v++) params[p++] = row[v];
      }
      statement.run(params);
      at += size;
    }
  }
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
