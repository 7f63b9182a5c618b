// Bench section: the journal's cost per call on each store, and a fleet of two
// hosts on one PostgreSQL. Measured twice: the journal alone (the write-ahead
// record and its finish of one mutating call, in this process), and through a
// host (a mutating worker echo, whose only extra cost over echo_worker is the
// write-ahead record). PostgreSQL is a throwaway cluster of this run; where it
// is not installed the section says so (under CI=true that is an error).
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { round, summarize, table, throughput, timeCalls } from './lib.mjs';
import { benchWriterThread } from './journal-writer.mjs';

const ECHO = { text: 'hello' };

/** Runs the section; `host(extra)` starts a toolhost like the other sections do. */
export async function benchJournal({ N, scratch, host, log }) {
  const { openJournal } = await import('../../dist/src/audit/open-journal.js');
  const { findPostgresBin, startCluster } = await import('../fleet-db/cluster.mjs');
  const stores = { sqlite: { url: `sqlite:${join(scratch, 'bench-journal.sqlite')}` } };
  let cluster;
  if (findPostgresBin() !== undefined) {
    cluster = await startCluster();
    for (const name of ['bench_direct', 'bench_host', 'bench_fleet']) cluster.psql(`CREATE DATABASE ${name}`);
    const pgUrl = (db) => `postgres://${cluster.superuser}@${encodeURIComponent(cluster.socketDir)}:${cluster.port}/${db}`;
    stores.postgres = { url: pgUrl('bench_direct'), hostUrl: pgUrl('bench_host'), fleetUrl: pgUrl('bench_fleet') };
  } else if (process.env.CI === 'true') {
    throw new Error('CI=true but PostgreSQL is not installed: the journal section needs it');
  }
  const result = { direct: {}, host: {}, ...(cluster ? {} : { postgres: { unavailable: 'PostgreSQL is not installed (no initdb)' } }) };
  try {
    // The journal alone: begin + finish of one mutating call.
    for (const [name, store] of Object.entries(stores)) {
      const journal = await openJournal({ url: store.url, stateDir: join(scratch, `journal-state-${name}`) });
      let n = 0;
      const oneCall = async () => {
        const id = `bench-${name}-${n++}`;
        const startedAt = Date.now();
        await journal.begin({
          id,
          sessionId: 'bench',
          tool: 'echo_write',
          argsHash: 'a'.repeat(64),
          sideEffect: 'local_mutation',
          decision: 'allow',
          rule: null,
          approval: 'not_needed',
          idempotencyKey: null,
          startedAt,
        });
        await journal.finish(id, { status: 'completed', errorCode: null, resultHash: 'b'.repeat(64), resultBytes: 5, replay: null, endedAt: Date.now() });
      };
      // Warm up with 8 in flight too, so the PostgreSQL pool has its connections (and their prepared statements).
      for (let i = 0; i < 20; i++) await oneCall();
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = 0; i < 3; i++) await oneCall();
        }),
      );
      const sequential = [];
      for (let i = 0; i < N; i++) {
        const start = performance.now();
        await oneCall();
        sequential.push(performance.now() - start);
      }
      const inFlight = [];
      const lanes = Array.from({ length: 8 }, async (_, lane) => {
        for (let i = lane; i < N; i += 8) {
          const start = performance.now();
          await oneCall();
          inFlight.push(performance.now() - start);
        }
      });
      const started = performance.now();
      await Promise.all(lanes);
      const callsPerSecond = N / ((performance.now() - started) / 1000);
      await journal.close();
      result.direct[name] = { sequential: summarize(sequential), inFlight8: { ...summarize(inFlight), callsPerSecond: round(callsPerSecond, 0) } };
    }
    // The SQLite writer thread's CPU per read-only record (the batches of more than four `serve` commits off its event loop).
    result.writerThread = await benchWriterThread(scratch, N < 20);
    // Through a host: a mutating echo on each store, against the read-only echo (one record, no write-ahead).
    for (const [name, store] of Object.entries(stores)) {
      const th = await host({ journal: store.hostUrl ?? store.url });
      await throughput(th.client, 'echo_write', ECHO, 24, 8);
      const readOnly = summarize(await timeCalls(th.client, 'echo_worker', ECHO, N));
      const mutating = summarize(await timeCalls(th.client, 'echo_write', ECHO, N));
      const mutatingThroughput = await throughput(th.client, 'echo_write', ECHO, N, 8);
      await th.close();
      result.host[name] = { echoWorker: readOnly, echoWrite: mutating, echoWriteCallsPerSecond8: round(mutatingThroughput, 0) };
    }
    // Two hosts on one PostgreSQL, 8 in flight each.
    if (stores.postgres) {
      const pair = await Promise.all([host({ journal: stores.postgres.fleetUrl }), host({ journal: stores.postgres.fleetUrl })]);
      for (const member of pair) await throughput(member.client, 'echo_write', ECHO, 24, 8);
      const times = [];
      const started = performance.now();
      await Promise.all(
        pair.flatMap((member) =>
          Array.from({ length: 8 }, async (_, lane) => {
            for (let i = lane; i < N; i += 8) {
              const start = performance.now();
              const answer = await member.client.callTool({ name: 'echo_write', arguments: ECHO }, undefined, { timeout: 120_000 });
              if (answer.isError) throw new Error(`echo_write failed on the fleet: ${JSON.stringify(answer.content).slice(0, 200)}`);
              times.push(performance.now() - start);
            }
          }),
        ),
      );
      const seconds = (performance.now() - started) / 1000;
      for (const member of pair) await member.close();
      result.fleet = { hosts: 2, inFlightPerHost: 8, ...summarize(times), callsPerSecond: round((2 * N) / seconds, 0) };
    }
  } finally {
    cluster?.stop();
  }
  log('Journal cost per mutating call (ms): the write-ahead record and its finish, alone');
  log(
    table(
      ['store', 'p50', 'p99', 'p50 (8 in flight)', 'p99 (8 in flight)', 'calls/s (8 in flight)'],
      Object.entries(result.direct).map(([name, r]) => [name, r.sequential.p50, r.sequential.p99, r.inFlight8.p50, r.inFlight8.p99, r.inFlight8.callsPerSecond]),
    ),
  );
  const writer = result.writerThread;
  log(
    writer.unavailable
      ? `SQLite journal threads: not measured (${writer.unavailable})`
      : `SQLite journal threads (writer and WAL checkpoint): ${writer.cpuUsPerRecord} µs CPU per read-only record (batches of ${writer.batch}, journal of ${writer.journalCalls} calls)`,
  );
  log('Through a host: echo_worker (read-only: one record) and echo_write (mutating: write-ahead + finish)');
  log(
    table(
      ['store', 'echo_worker p50', 'echo_write p50', 'echo_write p99', 'journal share of p50', 'echo_write calls/s (8 in flight)'],
      Object.entries(result.host).map(([name, r]) => [
        name,
        r.echoWorker.p50,
        r.echoWrite.p50,
        r.echoWrite.p99,
        round(r.echoWrite.p50 - r.echoWorker.p50),
        r.echoWriteCallsPerSecond8,
      ]),
    ),
  );
  if (result.fleet) log(`Two hosts on one PostgreSQL, 8 in flight each: p50 ${result.fleet.p50} ms, p99 ${result.fleet.p99} ms, ${result.fleet.callsPerSecond} calls/s in all`);
  else log('Two hosts on one PostgreSQL: not measured (PostgreSQL is not installed here)');
  log('');
  return result;
}
