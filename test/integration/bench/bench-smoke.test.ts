// `npm run bench` must keep working (the README's first screen names it): its
// smoke mode runs every section with a handful of calls. The numbers are not
// checked here (speed is the bench's to report, never a test's), only that
// every section ran, and that the kill section left no process behind.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../../helpers/mcp-clients.js';

beforeAll(() => ensureBuilt(), 300_000);

const scratch = mkdtempSync(join(tmpdir(), 'toolhost-bench-smoke-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Summary {
  readonly n: number;
  readonly p50: number;
}

function runBench(out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--no-node-snapshot', 'scripts/bench/run.mjs', '--smoke', '--out', out], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('npm run bench --smoke', () => {
  it('runs every section and writes the results', async () => {
    const out = join(scratch, 'results.json');
    const run = await runBench(out);
    expect(run.code, run.output).toBe(0);
    const results = JSON.parse(readFileSync(out, 'utf8')) as Record<string, any>;
    const latency = results['latency'];
    // The raw line client and the SDK client each time the peer and every mode, in the same interleaved rounds.
    const targets = ['peer', 'isolate', 'worker', 'process', 'persistent', 'namespace'];
    for (const column of ['rawClient', 'sdkClient']) {
      expect(Object.keys(latency[column]), column).toEqual(targets);
      for (const target of targets) {
        const summary = latency[column][target] as Summary & { roundsP50: number[]; ratio: number; callsPerSecond: number };
        expect(summary.n, `${column} ${target}`).toBeGreaterThan(0);
        expect(summary.p50, `${column} ${target}`).toBeGreaterThan(0);
        expect(summary.roundsP50, `${column} ${target}`).toHaveLength(2);
        expect(summary.ratio, `${column} ${target}`).toBeGreaterThan(0);
        expect(summary.callsPerSecond, `${column} ${target}`).toBeGreaterThan(0);
      }
    }
    // Each mode's floor is measured in the same rounds, and each mode's time over it reported.
    expect(Object.keys(latency.floors)).toEqual(['freshContext', 'threadHop', 'pipeRoundTrip', 'rawSpawn', 'rawBwrap']);
    for (const [floor, summary] of Object.entries(latency.floors as Record<string, { roundsP50: number[] }>)) expect(summary.roundsP50, floor).toHaveLength(2);
    for (const mode of targets.slice(1)) expect(latency.rawClient[mode].overFloorMs, mode).toEqual(expect.any(Number));
    // CPU per call at 8 in flight, from /proc, for every target (the peer's server too).
    // (Smoke windows are too short for the tree's 10 ms clock ticks to be compared with the main thread's run time.)
    expect(Object.keys(latency.cpuPerCallUs)).toEqual(targets);
    for (const [target, cpu] of Object.entries(latency.cpuPerCallUs as Record<string, { mainThread: number; serverTree: number }>)) {
      expect(cpu.mainThread, target).toBeGreaterThan(0);
      expect(cpu.serverTree, target).toBeGreaterThanOrEqual(0);
    }
    expect(latency.isolateCeiling.callsPerSecond).toBeGreaterThan(0);
    // Measured inside the host: every stage of a sequential worker call was timed.
    expect(Object.keys(latency.stages.echo_worker)).toEqual(expect.arrayContaining(['lookup', 'policy', 'run', 'result-checks', 'finish']));
    // Start-up: every command and the serve handshake, against a bare SDK server's start, from one run.
    expect(Object.keys(results['startup'].ms)).toEqual(
      expect.arrayContaining([
        'bareSdkServer.initialize',
        'bareNode',
        'version',
        'help',
        'validate.noLock',
        'validate.lock',
        'list.noLock',
        'list.lock',
        'serve.initialize',
        'serve.toolsList',
      ]),
    );
    // Every target of the run, met or missed, in one list.
    expect(results['goals'].length).toBeGreaterThanOrEqual(7);
    for (const goal of results['goals'] as { name: string; met: unknown }[]) expect(typeof goal.met, goal.name).toBe('boolean');
    // Over HTTP: toolhost's front, the SDK's own HTTP server and toolhost over stdio, in the same run.
    expect(Object.keys(results['http'].targets)).toEqual(['sdkHttp', 'toolhostHttp', 'toolhostStdio']);
    for (const [name, target] of Object.entries(results['http'].targets as Record<string, { latency: Summary; throughput: number }>)) {
      expect(target.latency.n, name).toBeGreaterThan(0);
      expect(target.throughput, name).toBeGreaterThan(0);
    }
    expect(results['http'].telemetry.off.n).toBeGreaterThan(0);
    expect(results['http'].telemetry.on.n).toBeGreaterThan(0);
    // A real upstream MCP server (server-filesystem), direct and through toolhost, in the same run.
    expect(results['upstream'].direct.n).toBeGreaterThan(0);
    expect(results['upstream'].throughToolhost.n).toBeGreaterThan(0);
    expect(results['upstream'].startup.hostReadyMs).toBeGreaterThan(0);
    expect(results['kill']).toMatchObject({ orphans: 0, leftAfterClose: 0 });
    expect(Object.keys(results['scale'])).toEqual(['10', '100', '1000']);
    // Loaded means listed: initialize is answered before the tools are loaded.
    for (const row of Object.values(results['scale'] as Record<string, { startupMs: number; loadedMs: number }>)) expect(row.loadedMs).toBeGreaterThan(row.startupMs);
    expect(results['rss'].samplesMb).toHaveLength(11);
    expect(Object.keys(results['spill'])).toEqual(['1MB', '2MB']);
    const beside = results['eventLoop'].besideSpawns;
    expect(beside.spawns).toBeGreaterThan(0);
    // Measured inside the host: it saw sandboxes start, so the measurement is wired.
    expect(beside.sandboxStartWork.count).toBeGreaterThan(0);
    for (const target of ['noNetwork', 'withAllowList', 'fetchDirect', 'fetchProxied', 'ctxFetchDirect', 'ctxFetchProxied'])
      expect(results['egress'][target].n, target).toBeGreaterThan(0);
    expect(results['egress'].proxyRatio).toBeGreaterThan(0);
    // The journal on each store; PostgreSQL may only be missing outside CI (the section then says so).
    const journal = results['journal'];
    const stores = journal['postgres']?.unavailable !== undefined && process.env['CI'] !== 'true' ? ['sqlite'] : ['sqlite', 'postgres'];
    for (const store of stores) {
      expect(journal.direct[store].sequential.p50, store).toBeGreaterThan(0);
      expect(journal.direct[store].inFlight8.n, store).toBeGreaterThan(0);
      expect(journal.host[store].echoWrite.p50, store).toBeGreaterThan(0);
    }
    // The SQLite journal threads' CPU per read-only record (Linux: read from each thread's schedstat).
    expect(journal.writerThread).toMatchObject({ batch: 60, threads: 2, cpuUsPerRecord: expect.any(Number) });
    expect(journal.writerThread.cpuUsPerRecord).toBeGreaterThan(0);
    if (stores.includes('postgres')) expect(journal.fleet).toMatchObject({ hosts: 2, inFlightPerHost: 8, callsPerSecond: expect.any(Number) });
    // Rules on arguments: a policy of 50 rules on a worker call, against the same call with none.
    const rules = results['rules'];
    expect(rules.rules).toBe(50);
    expect(rules.worker.none.p50).toBeGreaterThan(0);
    for (const key of ['rules50of10', 'rules50all']) {
      expect(rules[key].evaluationUsPerCall, key).toBeGreaterThan(0);
      expect(rules[key], key).toMatchObject({ shareOfWorkerCall: expect.any(Number), met: expect.any(Boolean) });
      expect(rules[key].host.n, key).toBeGreaterThan(0);
    }
    // Records before answers against the old order, and the chain's cost per read-only record.
    const chain = results['journalChain'];
    expect(Object.keys(chain.groupCommit)).toEqual(['answer after commit (now)', 'answer at once (before)']);
    expect(chain.groupCommit['answer after commit (now)'].sequential.p50).toBeGreaterThan(0);
    expect(chain.chainPerRecordUs.total).toBeGreaterThan(0);
    expect(chain.chainShareOfWorkerCall).toBeGreaterThan(0);
  }, 600_000);
});
