// The thread that commits the batches of read-only calls' records the host sends
// it (record-writer.ts), and checkpoints the WAL after one when the host asks
// (only when the checkpoint thread, wal-checkpoint-thread.mjs, is gone):
// its own connection to the journal file, so SQLite's work, the file writes and
// a checkpoint's copy and fsyncs run beside the host's event loop instead of on it.
// Plain JavaScript on purpose: the same file runs from src/ (tests) and dist/.
// It knows nothing of the schema: the host sends, per table, the INSERT's head
// and one row's placeholders, then each batch's rows of every table (the call
// records and their chain entries), committed in one transaction.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, busyTimeoutMs, inserts } = workerData;
// The host's connection made the file (WAL is a property of the file); this one only writes to it.
const db = new Database(file, { timeout: busyTimeoutMs, fileMustExist: true });
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
// The page cache of the host's connection (open-database.ts): under a steady load of concurrent
// read-only calls every batch is this connection's, and its cache kept each page it wrote.
db.pragma(`cache_size = -${workerData.pageCacheKib}`);
// As the host's connection (sqlite-store.ts): the WAL file keeps its size when the WAL starts over.
db.pragma(`journal_size_limit = ${workerData.walFileKeptBytes}`);
// The store asks for checkpoints (the checkpoint thread's, or this one's with a batch); SQLite's
// own, 1000 frames by default, ran inside the commit of a batch and held its answers: only a safety net.
db.pragma(`wal_autocheckpoint = ${workerData.autocheckpointPages}`);

// A batch goes in as a few multi-row INSERTs (up to 64 rows each) rather than
// one statement per row: each statement run has a fixed cost (the call into
// the addon, SQLite's reset and its VDBE start) that one row per run paid in
// full. The chunk sizes are fixed so a handful of prepared statements serve
// every batch size (60 rows: 3 x 16 + 3 x 4).
const CHUNK_SIZES = [64, 16, 4, 1];
/** Per table and chunk size: its statement and a parameter array reused from batch to batch. */
const chunks = inserts.map(() => new Map());

function chunkOf(table, size) {
  const insert = inserts[table];
  let chunk = chunks[table].get(size);
  if (chunk === undefined) {
    const sql = insert.head + Array.from({ length: size }, () => insert.row).join(', ');
    chunk = { statement: db.prepare(sql), params: new Array(size * insert.arity) };
    chunks[table].set(size, chunk);
  }
  return chunk;
}

function insertRows(table, rows) {
  const { arity } = inserts[table];
  let at = 0;
  for (const size of CHUNK_SIZES) {
    while (rows.length - at >= size) {
      const { statement, params } = chunkOf(table, size);
      let p = 0;
      for (let r = at; r < at + size; r++) {
        const row = rows[r];
        for (let v = 0; v < arity; v++) params[p++] = row[v];
      }
      statement.run(params);
      at += size;
    }
  }
}

const insertAll = db.transaction((tables) => {
  for (let table = 0; table < tables.length; table++) insertRows(table, tables[table]);
});

parentPort.on('message', (message) => {
  if (message.type === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    insertAll(message.tables);
    // PASSIVE: no writer waits for it. The host's own writes wait for this batch, so the
    // checkpoint usually copies the whole WAL, and the next commit starts it over.
    if (message.checkpoint === true) db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ id: message.id, ok: true });
  } catch (error) {
    parentPort.postMessage({ id: message.id, ok: false, message: String(error?.message ?? error), code: typeof error?.code === 'string' ? error.code : undefined });
  }
});
parentPort.postMessage({ type: 'ready' });
