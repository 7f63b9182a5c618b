// Bench section `journal-chain`: what a read-only call pays for its record
// being committed before its answer (group commit) and for the chain (an entry
// hashed over RFC 8785 JSON, one more row in the same transaction, a signed
// checkpoint every 100 entries), against a worker call through the host.
//
// The old order (answer at once, record committed ~10 ms later) no longer
// exists in the host, so the A/B is made on the SQLite store directly: one
// "call" is `recordSoon` either awaited (the answer waits for the commit: what
// the host does now) or not (the answer went out at once: what it did), one
// at a time and 8 in flight, the two orders taking turns. The old order made
// the same commits, so its 8-in-flight runs end once their records are
// committed. Figures from this shared, loaded machine are indicative only.
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { median, round, summarize, throughput, timeCalls } from './lib.mjs';

const ECHO = { text: 'hello' };

/** Runs the section; `host(extra)` starts a toolhost like the other sections do. */
export async function benchJournalChain({ N, scratch, host, log }) {
  const { openJournal } = await import('../../dist/src/audit/open-journal.js');
  const { ChainWriter } = await import('../../dist/src/audit/chain/chain-writer.js');
  const { ephemeralSigner } = await import('../../dist/src/audit/chain/chain-key.js');
  const { callFact, chainedCallOfValues, CALL_REV } = await import('../../dist/src/audit/chain/chain-records.js');
  const { callRowValues } = await import('../../dist/src/audit/call-row.js');
  const { INSERT_CALL_SQL } = await import('../../dist/src/audit/sqlite/journal-statements.js');
  // The host's own call ids (36-character UUIDv7): rows, id index entries and chained records as long as the host's.
  const { newCallId } = await import('../../dist/src/supervisor/call-id.js');

  const start = () => ({
    id: newCallId(),
    sessionId: 'bench',
    principal: null,
    tool: 'echo_worker',
    argsHash: 'a'.repeat(64),
    sideEffect: 'read_only',
    decision: 'allow',
    rule: null,
    approval: 'not_needed',
    idempotencyKey: null,
    startedAt: Date.now(),
    policyDigest: 'c'.repeat(64),
    definitionDigest: 'd'.repeat(64),
    approvedBy: null,
    approverName: null,
    arguments: null,
  });
  const finish = () => ({
    status: 'completed',
    errorCode: null,
    resultHash: 'b'.repeat(64),
    resultBytes: 5,
    replay: null,
    endedAt: Date.now(),
    egressAdmitted: 0,
    egressRefused: 0,
  });

  // 1. Group commit against the old order, on the store `serve` uses (SQLite: batches of up to four on the host's
  // connection, so one call at a time; larger ones, 8 in flight, on the writer thread). Both orders write the same
  // records on the same threads: the old one only answered before its commit. So a run of the old order ends once its
  // records are committed too; counting only its answers timed a burst into a queue that its commits, which cannot
  // go faster than they do now, would have to drain (its figure was hundreds of thousands of calls/s). The two
  // orders take turns, ORDER_ROUNDS times, and each keeps its median.
  const orders = [
    ['answer after commit (now)', true],
    ['answer at once (before)', false],
  ];
  const journals = [];
  for (const [, waits] of orders) {
    journals.push(
      await openJournal({
        url: `sqlite:${join(scratch, `chain-order-${waits}.sqlite`)}`,
        stateDir: join(scratch, `chain-order-state-${waits}`),
        writeBatchesOffThread: true,
      }),
    );
  }
  const oneCall = async (journal, waits) => {
    const committed = journal.recordSoon(start(), finish());
    if (waits) await committed;
    else await new Promise((resolve) => setImmediate(resolve));
  };
  const sequential = orders.map(() => []);
  const perSecond = orders.map(() => []);
  const ORDER_ROUNDS = 9;
  for (const [i, [, waits]] of orders.entries()) for (let n = 0; n < 50; n++) await oneCall(journals[i], waits);
  for (let r = 0; r < ORDER_ROUNDS; r++) {
    for (const [i, [, waits]] of orders.entries()) {
      const journal = journals[i];
      for (let n = 0; n < Math.ceil(N / ORDER_ROUNDS); n++) {
        const t = performance.now();
        await oneCall(journal, waits);
        sequential[i].push(performance.now() - t);
      }
      await journal.flush();
      const began = performance.now();
      let left = N;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (left-- > 0) await oneCall(journal, waits);
        }),
      );
      await journal.flush();
      perSecond[i].push(N / ((performance.now() - began) / 1000));
    }
  }
  const order = {};
  for (const [i, [name]] of orders.entries()) {
    await journals[i].close();
    order[name] = { sequential: summarize(sequential[i]), callsPerSecond8: round(median(perSecond[i]), 0) };
  }
  log('Group commit of read-only records (SQLite store as serve opens it; ms per call, calls/s with 8 in flight)');
  for (const [name, row] of Object.entries(order)) log(`  ${name.padEnd(28)} p50 ${row.sequential.p50} ms  p99 ${row.sequential.p99} ms  ${row.callsPerSecond8} calls/s`);

  // 2. The chain's cost per read-only record: the entry on the host's thread, the extra row in the commit.
  // Each measured in ROUNDS rounds and the least kept: on a shared machine the least is the closest to the work itself.
  const ROUNDS = 5;
  const least = (measure) => Math.min(...Array.from({ length: ROUNDS }, measure));
  const chain = new ChainWriter({ role: 'host', hostId: () => 'bench-host', signer: ephemeralSigner });
  const prepareUs = least(() => {
    const rows = Array.from({ length: N }, () => callRowValues(start(), finish(), 'bench-host'));
    const prepareStarted = performance.now();
    for (const row of rows) chain.commit(chain.prepare([callFact(chainedCallOfValues(row), CALL_REV.first)]));
    return ((performance.now() - prepareStarted) * 1000) / rows.length;
  });

  const store = await openJournal({ url: `sqlite:${join(scratch, 'chain-rows.sqlite')}`, stateDir: join(scratch, 'chain-rows-state') });
  const db = store.sync.database;
  const plainInsert = db.prepare(INSERT_CALL_SQL);
  const plainBatch = db.transaction((batch) => {
    for (const row of batch) plainInsert.run(row);
  });
  const batches = (count) => Array.from({ length: count }, () => Array.from({ length: 8 }, () => callRowValues(start(), finish(), store.hostId)));
  const timeBatches = (write, list) => {
    const t = performance.now();
    for (const batch of list) write(batch);
    return ((performance.now() - t) * 1000) / (list.length * 8);
  };
  timeBatches(plainBatch, batches(20));
  timeBatches((batch) => store.sync.recordRows(batch), batches(20));
  const plainUs = least(() => timeBatches(plainBatch, batches(Math.max(10, N / 8))));
  const chainedUs = least(() => timeBatches((batch) => store.sync.recordRows(batch), batches(Math.max(10, N / 8))));
  await store.close();

  // 3. Against a worker call through the host.
  const th = await host();
  const worker = summarize(await timeCalls(th.client, 'echo_worker', ECHO, N));
  const workerThroughput = await throughput(th.client, 'echo_worker', ECHO, N, 8);
  await th.close();
  const chainUs = prepareUs + Math.max(0, chainedUs - plainUs);
  const result = {
    groupCommit: order,
    chainPerRecordUs: { entryOnHostThread: round(prepareUs), insertWithoutChain: round(plainUs), insertWithChain: round(chainedUs), total: round(chainUs) },
    workerCall: { ...worker, callsPerSecond8: round(workerThroughput, 0) },
    chainShareOfWorkerCall: round(chainUs / 1000 / worker.p50, 3),
    hostThreadShareOfWorkerCall: round(prepareUs / 1000 / worker.p50, 3),
  };
  log(
    `Chain cost per read-only record (least of ${ROUNDS} rounds): entry ${result.chainPerRecordUs.entryOnHostThread} µs on the host thread, commit ${result.chainPerRecordUs.insertWithoutChain} → ${result.chainPerRecordUs.insertWithChain} µs per record in batches of 8`,
  );
  log(`  = ${round(chainUs)} µs, ${round(result.chainShareOfWorkerCall * 100, 1)}% of a worker call through the host (p50 ${worker.p50} ms; target under 10%);`);
  log(`  the host's own thread pays ${round(result.hostThreadShareOfWorkerCall * 100, 1)}% (serve commits batches of more than four on its writer thread)\n`);
  return result;
}
