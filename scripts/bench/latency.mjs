// Bench section `latency`: one echo call per sandbox mode through toolhost
// against the peer (a plain MCP SDK server serving the same tool over stdio,
// no sandbox, policy or journal), each under its floor, in one run.
//
// The raw line client (line-client.mjs) times the server: one JSON-RPC line
// out, its answer line in, the same code for the peer and the host. The SDK
// client's figures are a second column, what users of a real client see.
//
// Floors, measured in the same rounds from this process: what a call of each
// mode cannot avoid. isolate: a fresh isolated-vm context made and released
// (SPEC 3: a fresh context per call); worker: a message to a worker thread and
// back; persistent: a line through a long-lived child's pipes and back (cat);
// one-shot process: a raw spawn of cat; one-shot in a namespace: bubblewrap
// with a pid namespace around cat. A call's time over its floor is its p50
// minus the peer's p50 minus the floor's p50, per round, median of the rounds.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { LATENCY_HEADER, latencyRows, stageTable } from './latency-rows.mjs';
import { connectLine } from './line-client.mjs';
import { ROOT, connect, countedWindow, cpuUs, hostArgs, median, round, summarize, table, throughputOver, timeCalls, waitForFile } from './lib.mjs';

const ECHO = { text: 'hello' };
const MODES = ['isolate', 'worker', 'process', 'persistent', 'namespace'];
const FLOOR_OF = { isolate: 'freshContext', worker: 'threadHop', persistent: 'pipeRoundTrip', process: 'rawSpawn', namespace: 'rawBwrap' };
const FLOOR_LABEL = {
  freshContext: 'isolated-vm createContext()+release() with the isolate process flags',
  threadHop: 'worker thread message round trip',
  pipeRoundTrip: 'line through a child (cat) and back',
  rawSpawn: 'raw spawn(cat)',
  rawBwrap: 'raw spawn(bwrap pid ns, cat)',
};
// Bubblewrap alone around the tool's command: no limits, no cgroup, no other namespace, no MCP.
const BARE_BWRAP_CAT = ['bwrap', '--unshare-pid', '--die-with-parent', '--new-session', '--dev-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'cat'];

/**
 * Runs the section. `hostOptions(env)` gives hostArgs' options for a new host (its own
 * state folder); `goal(name, met, figure)` records a target as met or missed.
 */
export async function benchLatency({ N, WARMUP, ROUNDS, windowMs, scratch, hostOptions, cores, log, goal }) {
  const stageStats = join(scratch, 'stage-times.json');
  const peerArgs = [join(ROOT, 'scripts/bench/baseline-server.mjs')];
  const lineHost = (env = {}) => connectLine(process.execPath, hostArgs(hostOptions()), { env, cwd: ROOT });
  const open = [];
  const opened = async (promise) => {
    const connection = await promise;
    open.push(connection);
    return connection;
  };
  try {
    const peer = await opened(connectLine(process.execPath, peerArgs, { cwd: ROOT }));
    const sdkPeer = await opened(connect(process.execPath, peerArgs));
    // The latency host records its stage times; throughput gets hosts of its own, so calls
    // queued 8 deep do not blur where one call's time goes.
    const latencyHost = await opened(lineHost({ TOOLHOST_STAGE_STATS: stageStats }));
    const throughputHost = await opened(lineHost());
    const sdkHost = await opened(connect(process.execPath, hostArgs(hostOptions())));
    const targetsOf = (peerConnection, hostConnection, prefix = '') =>
      [
        { key: `${prefix}peer`, connection: peerConnection, tool: 'echo' },
        ...MODES.map((mode) => ({ key: `${prefix}${mode}`, connection: hostConnection, tool: `echo_${mode}` })),
      ].map((target) => ({ ...target, time: (count, warmup) => timeCalls(target.connection.client, target.tool, ECHO, count, warmup) }));
    const raw = targetsOf(peer, latencyHost);
    const sdk = targetsOf(sdkPeer, sdkHost, 'sdk:');
    const floors = await startFloors();
    open.push(floors);
    const timed = [...raw, ...sdk, ...floors.targets];

    // Every target warmed up first (the peer too: a cold peer flatters the ratios), then measured
    // in interleaved rounds (the order rotates each round), so a noisy stretch of this shared
    // machine lands on every target alike.
    for (const target of timed) await target.time(0, WARMUP);
    for (const target of targetsOf(peer, throughputHost).slice(1)) await target.time(0, WARMUP);
    process.kill(latencyHost.pid, 'SIGUSR2'); // the host's stage times start after the warm-up
    const durations = Object.fromEntries(timed.map((t) => [t.key, []]));
    const roundP50 = Object.fromEntries(timed.map((t) => [t.key, []]));
    const perRound = Math.max(1, Math.ceil(N / ROUNDS));
    const rotated = (list, r) => list.map((_, i) => list[(i + r) % list.length]);
    for (let r = 0; r < ROUNDS; r++) {
      for (const target of rotated(timed, r)) {
        const times = await target.time(perRound, 0);
        durations[target.key].push(...times);
        roundP50[target.key].push(summarize(times).p50);
      }
    }

    // Throughput, 8 in flight, warmed up as it is measured on every target: a host's first
    // concurrent calls start what sequential calls never need (isolates, pool threads, prepared
    // sandboxes). Each window is time-boxed. CPU per call: the server's process tree (its
    // sandboxes' processes too) over every window of the run, raw client only.
    const window = { minMs: windowMs, minCalls: perRound, inFlight: 8 };
    const flowing = [...targetsOf(peer, throughputHost), ...sdk];
    for (const target of flowing) await throughputOver(target.connection.client, target.tool, ECHO, window);
    const roundThroughput = Object.fromEntries(flowing.map((t) => [t.key, []]));
    const cpuSpent = Object.fromEntries(flowing.map((t) => [t.key, { mainUs: 0, treeUs: 0, clientUs: 0, calls: 0 }]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const target of rotated(flowing, r)) {
        const before = cpuUs(target.connection.pid);
        const clientBefore = process.cpuUsage();
        const { perSecond, calls } = await countedWindow(target.connection.client, target.tool, ECHO, window);
        const client = process.cpuUsage(clientBefore);
        const after = cpuUs(target.connection.pid);
        roundThroughput[target.key].push(perSecond);
        const spent = cpuSpent[target.key];
        spent.mainUs += after.mainUs - before.mainUs;
        spent.treeUs += after.treeUs - before.treeUs;
        spent.clientUs += client.user + client.system;
        spent.calls += calls;
      }
    }

    const perRoundOf = (key, base, fn) => round(median(roundP50[key].map((p50, i) => fn(p50, roundP50[base][i], i))));
    const result = { rawClient: {}, sdkClient: {}, floors: {}, cpuPerCallUs: {} };
    for (const [column, targets, peerKey] of [
      ['rawClient', raw, 'peer'],
      ['sdkClient', sdk, 'sdk:peer'],
    ]) {
      for (const { key } of targets) {
        const name = key.replace('sdk:', '');
        const floorKey = FLOOR_OF[name];
        result[column][name] = {
          ...summarize(durations[key]),
          ratio: perRoundOf(key, peerKey, (p50, peerP50) => p50 / peerP50),
          overPeerMs: perRoundOf(key, peerKey, (p50, peerP50) => p50 - peerP50),
          ...(floorKey ? { floor: floorKey, overFloorMs: perRoundOf(key, peerKey, (p50, peerP50, i) => p50 - peerP50 - roundP50[floorKey][i]) } : {}),
          callsPerSecond: round(median(roundThroughput[key]), 0),
          throughputRatio: round(median(roundThroughput[key].map((tp, i) => tp / roundThroughput[peerKey][i]))),
          roundsP50: roundP50[key],
        };
      }
    }
    for (const { key } of floors.targets) result.floors[key] = { ...summarize(durations[key]), roundsP50: roundP50[key] };
    for (const { key } of targetsOf(peer, throughputHost)) {
      const spent = cpuSpent[key];
      result.cpuPerCallUs[key] = {
        mainThread: round(spent.mainUs / spent.calls, 0),
        serverTree: round(spent.treeUs / spent.calls, 0),
        client: round(spent.clientUs / spent.calls, 0),
      };
    }
    // A fresh context per isolate call costs at least the floor's CPU: on this machine's cores
    // alone, without protocol, policy or journal, that caps isolate calls 8 in flight.
    const ceiling = round((cores * 1000) / result.floors.freshContext.p50, 0);
    result.isolateCeiling = { callsPerSecond: ceiling, share: round(result.rawClient.isolate.callsPerSecond / ceiling) };

    printLatency(result, { log, WARMUP, ROUNDS, perRound, cores });
    const rawOf = result.rawClient;
    goal('isolate p50 − peer p50 − fresh context ≤ 0.25 ms (median of rounds)', rawOf.isolate.overFloorMs <= 0.25, `${rawOf.isolate.overFloorMs} ms`);
    goal(
      'isolate, 8 in flight ≥ 0.6 of the fresh-context ceiling',
      result.isolateCeiling.share >= 0.6,
      `${result.isolateCeiling.share} (${rawOf.isolate.callsPerSecond} of ${ceiling} calls/s)`,
    );
    goal('worker p50 ≤ 1.5x peer (raw client)', rawOf.worker.ratio <= 1.5, `${rawOf.worker.ratio}x`);
    goal('persistent p50 ≤ 1.5x peer (raw client)', rawOf.persistent.ratio <= 1.5, `${rawOf.persistent.ratio}x`);
    goal('worker, 8 in flight ≥ 0.5x peer throughput', rawOf.worker.throughputRatio >= 0.5, `${rawOf.worker.throughputRatio}x`);
    goal('persistent, 8 in flight ≥ 0.5x peer throughput', rawOf.persistent.throughputRatio >= 0.5, `${rawOf.persistent.throughputRatio}x`);
    goal('one-shot in a namespace ≤ 2 ms over bare bubblewrap', rawOf.namespace.overFloorMs <= 2, `${rawOf.namespace.overFloorMs} ms`);

    // Where a call's time goes inside the host (measured by the host, after the warm-up).
    await latencyHost.close();
    const stages = await waitForFile(stageStats);
    if (stages) {
      result.stages = stages;
      const { header, rows } = stageTable(stages);
      log('\nHost time per stage of one sequential call, p50 (µs), after the warm-up');
      log(table(header, rows));
    }
    log('');
    return result;
  } finally {
    await Promise.allSettled(open.map((connection) => connection.close()));
  }
}

function printLatency(result, { log, WARMUP, ROUNDS, perRound, cores }) {
  log(`Per-call latency (ms), sequential, over stdio: ${WARMUP} warm-up calls per target, then ${ROUNDS} interleaved rounds of ${perRound}`);
  log('Raw line client (times the server); SDK client (what a real client sees) in the last columns; over peer / over floor: medians of the rounds');
  log(table(LATENCY_HEADER, latencyRows(result)));
  log('Floors (ms)');
  log(
    table(
      ['floor', 'p50', 'p99', 'p50 per round'],
      Object.entries(result.floors).map(([key, f]) => [FLOOR_LABEL[key], f.p50, f.p99, f.roundsP50.join(' ')]),
    ),
  );
  log(`CPU per call: the server's whole process tree (/proc clock ticks, reaped children included) and its main thread (schedstat), at 8 in flight over all windows of the run`);
  log(
    `isolate ceiling from the fresh-context floor alone: ${cores} cores / ${result.floors.freshContext.p50} ms = ${result.isolateCeiling.callsPerSecond} calls/s; isolate reached ${result.isolateCeiling.share} of it`,
  );
}

/** The floors as timed targets; close() ends what they keep (the worker thread, the cat child, the isolate). */
async function startFloors() {
  const { ISOLATE_PROCESS_NODE_FLAGS } = await import('../../dist/src/runner/isolate/isolate-sandbox.js');
  const contexts = spawn(process.execPath, [...ISOLATE_PROCESS_NODE_FLAGS, join(ROOT, 'scripts/bench/fresh-context-floor.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const contextLines = connectLines(contexts.stdout);
  const worker = new Worker('const { parentPort } = require("node:worker_threads"); parentPort.on("message", (m) => parentPort.postMessage(m));', { eval: true });
  const cat = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
  cat.stdout.setEncoding('utf8');
  const line = `${JSON.stringify(ECHO)}\n`;
  const timesOf = (once) => async (count, warmup) => {
    const times = [];
    for (let i = 0; i < count + warmup; i++) {
      const start = performance.now();
      await once();
      if (i >= warmup) times.push(performance.now() - start);
    }
    return times;
  };
  const targets = [
    {
      key: 'freshContext',
      time: async (count, warmup) => {
        contexts.stdin.write(`${JSON.stringify({ count, warmup })}\n`);
        return JSON.parse(await contextLines.next());
      },
    },
    {
      key: 'threadHop',
      time: timesOf(
        () =>
          new Promise((resolve) => {
            worker.once('message', resolve);
            worker.postMessage(ECHO);
          }),
      ),
    },
    {
      key: 'pipeRoundTrip',
      time: timesOf(
        () =>
          new Promise((resolve) => {
            cat.stdout.once('data', resolve);
            cat.stdin.write(line);
          }),
      ),
    },
    { key: 'rawSpawn', time: timesOf(() => spawnOnce(['cat'])) },
    { key: 'rawBwrap', time: timesOf(() => spawnOnce(BARE_BWRAP_CAT)) },
  ];
  return {
    targets,
    async close() {
      contexts.stdin.end();
      cat.stdin.end();
      await worker.terminate();
    },
  };
}

/** The lines of a stream, one per next() call, in order. */
function connectLines(stream) {
  const lines = createInterface({ input: stream })[Symbol.asyncIterator]();
  return {
    async next() {
      const { value, done } = await lines.next();
      if (done) throw new Error('the fresh-context floor process ended');
      return value;
    },
  };
}

/** One spawn of argv fed the echo arguments on stdin, until its pipes close. */
function spawnOnce([file, ...args]) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.on('data', () => {});
    child.on('error', reject);
    child.on('close', resolve);
    child.stdin.end(JSON.stringify(ECHO));
  });
}
