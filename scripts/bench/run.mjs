// npm run bench: toolhost against a plain MCP SDK server, measured in one run
// on this machine, reported as ratios to that baseline (absolute times on
// shared machines are noisy; ratios in one run are not). Writes
// bench-results.json (or --out FILE). `--quick` runs fewer iterations;
// `--smoke` runs every section with a handful (the test suite checks the bench
// still works this way, not its numbers); `--only SECTION,...` runs some.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchJournal } from './journal.mjs';
import { benchStartup } from './startup.mjs';
import { benchRulesSection } from './rules.mjs';
import { benchJournalChain } from './journal-chain.mjs';
import { benchLatency } from './latency.mjs';
import { ROOT, callOk, connect, connectHttp, findMarked, hostArgs, median, round, rssMb, summarize, table, throughput, timeCalls, waitForFile } from './lib.mjs';

const smoke = process.argv.includes('--smoke');
const quick = smoke || process.argv.includes('--quick');
const N = smoke ? 6 : quick ? 60 : 400;
const WARMUP = smoke ? 5 : quick ? 100 : 300;
const ROUNDS = smoke ? 2 : quick ? 4 : 10;
/** Least length of one target's throughput window in a round (8 in flight). */
const THROUGHPUT_WINDOW_MS = smoke ? 20 : quick ? 150 : 400;
// More kills in a row than the default failure run (20), even in smoke mode, so the bench policy must lift it.
const KILLS = smoke ? 25 : quick ? 50 : 200;
const LEAK_CALLS = smoke ? 100 : quick ? 1000 : 10_000;
const SCALE_ROUNDS = smoke ? 1 : 3;
const SPILL_MB = smoke ? [1, 2] : [10, 100];
const outAt = process.argv.indexOf('--out');
const OUT_FILE = outAt > 0 && process.argv[outAt + 1] ? process.argv[outAt + 1] : join(ROOT, 'bench-results.json');
// `--only latency,kill` runs just those sections (latency, http, upstream, kill, scale, spill, event-loop, egress, journal, startup, rules, journal-chain).
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 && process.argv[onlyAt + 1] ? new Set(process.argv[onlyAt + 1].split(',')) : undefined;
const want = (section) => only === undefined || only.has(section);
const ECHO = { text: 'hello' };

if (!existsSync(join(ROOT, 'dist/src/cli/main.js'))) {
  console.error('dist/ is missing: run `npm install` (it builds) or `npm run build` first.');
  process.exit(2);
}

const scratch = mkdtempSync(join(tmpdir(), 'toolhost-bench-'));
const workspace = join(scratch, 'workspace');
mkdirSync(workspace);
// Trust follows where manifests live; the bench's live outside the scratch
// workspace, so its policy names them (and the generated ones) by absolute path.
const policy = join(scratch, 'policy.yaml');
writeFileSync(policy, readFileSync(join(ROOT, 'scripts/bench/policy.yaml'), 'utf8').replace('"**"', `"${ROOT}scripts/bench/manifests/**", "${scratch}/**"`));
const base = { manifests: join(ROOT, 'scripts/bench/manifests'), policy, workspace };
let stateCount = 0;
const host = (extra = {}, env = {}) => connect(process.execPath, hostArgs({ ...base, state: join(scratch, `state-${stateCount++}`), ...extra }), env);
const os = await import('node:os');
const results = {
  machine: { node: process.version, cpus: os.cpus().length, loadAverage: os.loadavg().map((load) => round(load)), date: new Date().toISOString().slice(0, 16).replace('T', ' ') },
  quick,
  smoke,
};
const log = (line) => process.stdout.write(`${line}\n`);
// Every target the run checks, met or missed, printed together at the end.
const goals = [];
const goal = (name, met, figure) => goals.push({ name, met, figure });

try {
  log(`toolhost bench${smoke ? ' (smoke)' : quick ? ' (quick)' : ''}: ${N} calls per mode, ${KILLS} kills, ${LEAK_CALLS} calls for the leak check\n`);

  if (want('latency')) {
    results.latency = await benchLatency({
      N,
      WARMUP,
      ROUNDS,
      windowMs: THROUGHPUT_WINDOW_MS,
      scratch,
      cores: results.machine.cpus,
      log,
      goal,
      hostOptions: () => ({ ...base, state: join(scratch, `state-${stateCount++}`) }),
    });
  }

  if (want('upstream')) {
    // 1b. An upstream MCP server (the reference filesystem server, manifests/servers/fs.yaml)
    // through toolhost against the same server called directly by an SDK client, in this
    // run, in interleaved batches; and its start-up (host ready: the server listed once in
    // its sandbox; first call: served by that same instance).
    const fsArgs = { path: workspace };
    const direct = await connect(process.execPath, [join(ROOT, 'manifests/servers/filesystem.mjs'), workspace]);
    const directFirstStart = performance.now();
    await callOk(direct.client, 'list_allowed_directories', {});
    const directFirstCallMs = performance.now() - directFirstStart;
    const viaHost = await connect(process.execPath, hostArgs({ manifests: join(ROOT, 'manifests/servers'), policy, workspace, state: join(scratch, `state-${stateCount++}`) }));
    const hostFirstStart = performance.now();
    await callOk(viaHost.client, 'fs__list_allowed_directories', {});
    const hostFirstCallMs = performance.now() - hostFirstStart;
    const directTimes = [];
    const hostTimes = [];
    const batch = smoke ? 5 : 20;
    for (let done = 0; done < N; done += batch) {
      directTimes.push(...(await timeCalls(direct.client, 'list_directory', fsArgs, batch, done === 0 ? 10 : 0)));
      hostTimes.push(...(await timeCalls(viaHost.client, 'fs__list_directory', fsArgs, batch, done === 0 ? 10 : 0)));
    }
    await Promise.all([direct.close(), viaHost.close()]);
    const directSummary = summarize(directTimes);
    const hostSummary = summarize(hostTimes);
    results.upstream = {
      direct: directSummary,
      throughToolhost: hostSummary,
      p50Ratio: round(hostSummary.p50 / directSummary.p50),
      startup: {
        directConnectMs: round(direct.startupMs),
        directFirstCallMs: round(directFirstCallMs),
        hostReadyMs: round(viaHost.startupMs),
        hostFirstCallMs: round(hostFirstCallMs),
      },
    };
    log('Upstream MCP server (server-filesystem list_directory), sequential, interleaved batches (ms)');
    log(
      table(
        ['target', 'p50', 'p99', 'p50 ratio'],
        [
          ['the server, direct SDK client', directSummary.p50, directSummary.p99, 1],
          ['the same server through toolhost', hostSummary.p50, hostSummary.p99, results.upstream.p50Ratio],
        ],
      ),
    );
    log(
      `start-up: direct connect ${results.upstream.startup.directConnectMs} ms (first call ${results.upstream.startup.directFirstCallMs} ms); toolhost ready ${results.upstream.startup.hostReadyMs} ms (the server listed in its sandbox), first call ${results.upstream.startup.hostFirstCallMs} ms (served by the instance that listed it)\n`,
    );
  }

  if (want('kill')) {
    // 2. Kill latency: deadline to the whole tree gone, with orphans counted.
    const killer = await host();
    const kills = [];
    for (let i = 0; i < KILLS; i++) {
      const start = performance.now();
      const result = await killer.client.callTool({ name: 'sleeper', arguments: {} });
      const code = result._meta?.['toolhost/error']?.code;
      if (code !== 'timeout') throw new Error(`sleeper: expected timeout, got ${JSON.stringify(result).slice(0, 200)}`);
      kills.push(performance.now() - start - 50);
    }
    // Orphans: anything of the killed calls still alive (the sandbox prepared
    // for the next call is not theirs); after the host closes, nothing at all.
    // A sandbox prepared for the next call that has not reached its start gate
    // yet (slow on a loaded machine) looks like an orphan for a moment: polled,
    // bounded; an orphan of a killed call (a setsid'd sleep 1000) stays.
    let orphans = findMarked('toolhost-bench-orphan-marker', { skipPrepared: true }).length;
    for (let i = 0; i < 100 && orphans > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      orphans = findMarked('toolhost-bench-orphan-marker', { skipPrepared: true }).length;
    }
    await killer.close();
    let leftAfterClose = findMarked('toolhost-bench-orphan-marker').length;
    for (let i = 0; i < 100 && leftAfterClose > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      leftAfterClose = findMarked('toolhost-bench-orphan-marker').length;
    }
    results.kill = { ...summarize(kills), orphans, leftAfterClose };
    log(
      `Kill latency after the deadline (ms): p50 ${results.kill.p50}, p99 ${results.kill.p99}, orphans ${orphans}, left after close ${leftAfterClose} (target p99 < 50, 0 orphans)\n`,
    );
  }

  if (want('scale')) {
    // 3. Scale: start-up and tools/list with many manifests; RSS idle and after many calls.
    // Each count started SCALE_ROUNDS times, the counts interleaved, medians kept: one start
    // alone swings by a third on a shared machine.
    results.scale = {};
    const counts = [10, 100, 1000];
    const dirs = {};
    for (const count of counts) {
      const dir = (dirs[count] = join(scratch, `manifests-${count}`));
      mkdirSync(dir);
      cpSync(join(ROOT, 'scripts/bench/manifests/echo.js'), join(dir, 'echo.js'));
      const yaml = readFileSync(join(ROOT, 'scripts/bench/manifests/echo_isolate.yaml'), 'utf8');
      for (let i = 0; i < count; i++) writeFileSync(join(dir, `t${i}.yaml`), yaml.replace('name: echo_isolate', `name: echo_${i}`));
    }
    const starts = Object.fromEntries(counts.map((count) => [count, []]));
    for (let r = 0; r < SCALE_ROUNDS; r++) {
      for (const count of counts) {
        const scaled = await host({ manifests: dirs[count] });
        const start = performance.now();
        const listed = await scaled.client.listTools();
        const listMs = performance.now() - start;
        if (listed.tools.length !== count) throw new Error(`expected ${count} tools, got ${listed.tools.length}`);
        starts[count].push({ startupMs: scaled.startupMs, listMs, rssMb: rssMb(scaled.pid) });
        await scaled.close();
      }
    }
    for (const count of counts) {
      const of = (key) => round(median(starts[count].map((start) => start[key])));
      // Loaded: from the spawn until the first tools/list is answered with every tool. `serve` answers
      // initialize before its tools are loaded, so initialize alone says nothing of the manifests.
      const loaded = round(median(starts[count].map((start) => start.startupMs + start.listMs)));
      results.scale[count] = { startupMs: of('startupMs'), toolsListMs: of('listMs'), loadedMs: loaded, idleRssMb: of('rssMb'), starts: SCALE_ROUNDS };
    }
    // RSS swings by tens of MB with garbage collection (the host's and each
    // isolate's), so it is sampled every tenth of the run: growth compares the
    // median of the last three samples with the median of the first three.
    const leak = await host();
    await timeCalls(leak.client, 'echo_isolate', ECHO, Math.min(1000, LEAK_CALLS), 0);
    const rssSamples = [rssMb(leak.pid)];
    for (let i = 0; i < 10; i++) {
      await timeCalls(leak.client, 'echo_isolate', ECHO, LEAK_CALLS / 10, 0);
      rssSamples.push(rssMb(leak.pid));
    }
    await leak.close();
    const median3 = (values) => [...values].sort((a, b) => a - b)[1];
    const rssAfterWarm = rssSamples[0];
    const rssAfterMany = rssSamples[rssSamples.length - 1];
    results.rss = {
      afterWarmupMb: rssAfterWarm,
      afterCallsMb: rssAfterMany,
      samplesMb: rssSamples,
      calls: LEAK_CALLS,
      growthMb: round(median3(rssSamples.slice(-3)) - median3(rssSamples.slice(0, 3))),
    };
    log(`Scale (medians of ${SCALE_ROUNDS} starts of each, interleaved)`);
    log(
      table(
        ['manifests', 'initialize ms', 'then tools/list ms', 'loaded ms', 'idle RSS MB'],
        Object.entries(results.scale).map(([k, v]) => [k, v.startupMs, v.toolsListMs, v.loadedMs, v.idleRssMb]),
      ),
    );
    log(`RSS after 1000 warm-up calls, then every ${LEAK_CALLS / 10} calls (MB): ${rssSamples.join(' ')}`);
    log(`growth (median of the last 3 samples - median of the first 3): ${results.rss.growthMb} MB; target: within 10% of the RSS after the warm-up\n`);
    goal('1000 manifests loaded (spawn to the first tools/list answered) under 1 s', results.scale[1000].loadedMs < 1000, `${results.scale[1000].loadedMs} ms`);
    goal('RSS flat over the calls (growth within 10% after the warm-up)', results.rss.growthMb <= 0.1 * rssAfterWarm, `${results.rss.growthMb} MB on ${rssAfterWarm} MB`);
  }

  if (want('spill')) {
    // 4. Artifact spill.
    const spill = await host();
    results.spill = {};
    for (const mb of SPILL_MB) {
      const bytes = mb * 1024 * 1024;
      const start = performance.now();
      const result = await callOk(spill.client, 'big_result', { bytes });
      const ms = performance.now() - start;
      const link = result.content.find((block) => block.type === 'resource_link');
      if (!link) throw new Error('big_result: no resource_link in the result');
      results.spill[`${mb}MB`] = { ms: round(ms), mbPerSecond: round(mb / (ms / 1000)) };
    }
    await spill.close();
    log(
      `Artifact spill: ${Object.entries(results.spill)
        .map(([k, v]) => `${k} in ${v.ms} ms (${v.mbPerSecond} MB/s)`)
        .join(', ')}\n`,
    );
  }

  if (want('event-loop')) {
    // 5. Event-loop delay while one-shot spawns run beside warm isolate calls,
    // against a control window of isolate calls alone. Each host is warmed up
    // first and then told (SIGUSR2) to start its measurement over, so start-up
    // and the first isolate are not counted.
    const windowMs = smoke ? 300 : quick ? 2000 : 5000;
    const measureLoop = async (name, withSpawns) => {
      const statsFile = join(scratch, `event-loop-${name}.json`);
      const measured = await host({}, { TOOLHOST_EVENT_LOOP_STATS: statsFile });
      for (let i = 0; i < 10; i++) {
        await callOk(measured.client, 'echo_isolate', ECHO);
        if (withSpawns) await callOk(measured.client, 'echo_process', ECHO);
      }
      process.kill(measured.pid, 'SIGUSR2');
      const until = performance.now() + windowMs;
      const isolateTimes = [];
      let spawns = 0;
      const spawnLane = async () => {
        while (performance.now() < until) {
          await callOk(measured.client, 'echo_process', ECHO);
          spawns++;
        }
      };
      const isolateLane = async () => {
        while (performance.now() < until) {
          const start = performance.now();
          await callOk(measured.client, 'echo_isolate', ECHO);
          isolateTimes.push(performance.now() - start);
        }
      };
      await Promise.all(withSpawns ? [spawnLane(), spawnLane(), isolateLane()] : [isolateLane()]);
      await measured.close();
      return { ...(await waitForFile(statsFile)), spawns, isolateCalls: summarize(isolateTimes) };
    };
    const alone = await measureLoop('alone', false);
    const beside = await measureLoop('beside', true);
    results.eventLoop = { isolateAlone: alone, besideSpawns: beside };
    log('Event-loop delay of the host (ms; target: no spawn blocks the loop > 1 ms)');
    log(
      table(
        ['window', 'loop max', 'loop p99', 'loop mean', 'spawns', 'isolate p50', 'isolate p99'],
        [
          ['isolate calls alone', alone.maxMs ?? 'n/a', alone.p99Ms ?? 'n/a', alone.meanMs ?? 'n/a', 0, alone.isolateCalls.p50, alone.isolateCalls.p99],
          [
            'beside 2 lanes of one-shot spawns',
            beside.maxMs ?? 'n/a',
            beside.p99Ms ?? 'n/a',
            beside.meanMs ?? 'n/a',
            beside.spawns,
            beside.isolateCalls.p50,
            beside.isolateCalls.p99,
          ],
        ],
      ),
    );
    // The loop delay above also counts the host waiting for a CPU: on two cores,
    // bubblewrap, the tools, the spawner and this client all run beside it. What a
    // spawn itself blocks is the host's synchronous work per sandbox (the fork is
    // the spawner's), measured inside the host:
    const work = beside.sandboxStartWork;
    if (work)
      log(
        `host's synchronous work per sandbox start (${work.count} stretches): p50 ${work.p50Ms} ms, p99 ${work.p99Ms} ms, max ${work.maxMs} ms; fork() runs in the spawner process`,
      );
    for (const [name, window] of [
      ['alone', alone],
      ['beside spawns', beside],
    ]) {
      const gc = window.gcPauses;
      const kinds = Object.entries(gc?.byKind ?? {})
        .map(([kind, pauses]) => `${pauses.count} ${kind} (max ${pauses.maxMs} ms)`)
        .join(', ');
      if (gc) log(`host's garbage-collection pauses, ${name}: ${gc.count}, p50 ${gc.p50Ms} ms, p99 ${gc.p99Ms} ms, max ${gc.maxMs} ms: ${kinds}`);
    }
  }

  if (want('egress')) {
    // 6. Egress: a namespaced one-shot call with and without a network allow list
    // (the grant's proxy socket and the socat bridge), and fetches through the
    // proxy against direct ones from the host's network, interleaved in one run.
    results.egress = await benchEgress();
    log('Egress (ms)');
    log(
      table(
        ['target', 'p50', 'p99', 'ratio'],
        [
          ['one-shot namespace call, no network', results.egress.noNetwork.p50, results.egress.noNetwork.p99, ''],
          ['one-shot namespace call, with an allow list', results.egress.withAllowList.p50, results.egress.withAllowList.p99, results.egress.allowListRatio],
          ['fetch, direct (isolation none)', results.egress.fetchDirect.p50, results.egress.fetchDirect.p99, ''],
          ['fetch, through the proxy (namespace)', results.egress.fetchProxied.p50, results.egress.fetchProxied.p99, results.egress.proxyRatio],
          ['ctx.fetch, from the host (worker)', results.egress.ctxFetchDirect.p50, results.egress.ctxFetchDirect.p99, ''],
          ['ctx.fetch, from the isolate process through the proxy', results.egress.ctxFetchProxied.p50, results.egress.ctxFetchProxied.p99, results.egress.ctxFetchRatio],
        ],
      ),
    );
    log('');
  }

  if (want('http')) {
    // Over HTTP: toolhost's Streamable HTTP front (token auth) against a plain SDK HTTP
    // server serving the same trivial tool, and against toolhost over stdio, interleaved in
    // rounds so drift hits every target alike. Telemetry: the same host with --otel exporting
    // to a sink, against the default (off), to show what off costs: nothing.
    results.http = await benchHttp();
    log('Over HTTP (same SDK v1 client; ms, sequential; calls/s with 8 in flight)');
    log(
      table(
        ['target', 'p50', 'p99', 'calls/s (8 in flight)', 'p50 ratio to SDK HTTP', 'throughput ratio'],
        Object.entries(results.http.targets).map(([name, t]) => [
          name,
          t.latency.p50,
          t.latency.p99,
          t.throughput,
          round(t.latency.p50 / results.http.targets.sdkHttp.latency.p50),
          round(t.throughput / results.http.targets.sdkHttp.throughput),
        ]),
      ),
    );
    log(`telemetry off vs on (stdio, isolate echo): p50 ${results.http.telemetry.off.p50} ms off, ${results.http.telemetry.on.p50} ms on\n`);
  }

  if (want('startup')) {
    results.startup = await benchStartup({ rounds: smoke ? 1 : quick ? 2 : 5, log, goal });
  }

  if (want('journal')) {
    // 7. The journal's cost per call on each store, and two hosts on one PostgreSQL.
    results.journal = await benchJournal({ N, scratch, host, log });
  }

  if (want('rules')) {
    // 8. Rules on arguments: 50 rules on a worker call against none.
    results.rules = await benchRulesSection({ N, WARMUP, ROUNDS, scratch, host, log, policy, base });
  }

  if (want('journal-chain')) {
    // 9. Records committed before their answers (group commit) and the chain: their cost per read-only call.
    results.journalChain = await benchJournalChain({ N, scratch, host, log });
    // What waiting for the commit adds to each call at 8 in flight, as a share of a worker call's time at 8 in flight.
    const { groupCommit, workerCall } = results.journalChain;
    const perCallMs = (callsPerSecond) => 1000 / callsPerSecond;
    const share =
      (perCallMs(groupCommit['answer after commit (now)'].callsPerSecond8) - perCallMs(groupCommit['answer at once (before)'].callsPerSecond8)) /
      perCallMs(workerCall.callsPerSecond8);
    goal('record before the answer costs ≤ 10% of a worker call at 8 in flight', share <= 0.1, `${round(share * 100, 1)}%`);
  }

  results.goals = goals;
  log('Targets');
  for (const { name, met, figure } of goals) log(`  ${met ? 'met   ' : 'MISSED'}  ${name}: ${figure}`);
  writeFileSync(OUT_FILE, `${JSON.stringify(results, null, 2)}\n`);
  log(`\nwrote ${OUT_FILE}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

/** The manifest of a tool that fetches the bench server on 127.0.0.1:`port` in a loop: `sandbox` lines go under `sandbox:`, `top` lines beside it. */
function fetchLoopManifest(name, description, sandbox, port, top = []) {
  return [
    `name: ${name}`,
    `description: ${description}`,
    'sideEffect: read_only',
    'timeoutMs: 30000',
    'sandbox:',
    ...sandbox.map((line) => `  ${line}`),
    ...top,
    'network:',
    `  allow: ["127.0.0.1:${port}"]`,
    'input:',
    '  type: object',
    '  properties:',
    '    url: { type: string, maxLength: 200 }',
    '    count: { type: integer }',
    '',
  ].join('\n');
}

async function benchEgress() {
  const { createServer } = await import('node:http');
  const server = createServer((request, response) => response.end('ok'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  const dir = join(scratch, 'manifests-egress');
  mkdirSync(dir);
  cpSync(join(ROOT, 'scripts/bench/fetch_loop.py'), join(dir, 'fetch_loop.py'));
  cpSync(join(ROOT, 'scripts/bench/fetch_loop.js'), join(dir, 'fetch_loop.js'));
  // ctx.fetch: from an isolate tool's isolate process through its proxy, against a worker tool's from the host.
  for (const [name, mode] of [
    ['ctx_fetch_proxied', 'isolate'],
    ['ctx_fetch_direct', 'worker'],
  ]) {
    writeFileSync(join(dir, `${name}.yaml`), fetchLoopManifest(name, `ctx.fetch of the bench server in a loop (${mode}).`, [`mode: ${mode}`], port, ['entry: ./fetch_loop.js']));
  }
  for (const name of ['echo_namespace.yaml', 'echo_namespace_net.yaml']) cpSync(join(ROOT, 'scripts/bench/manifests', name), join(dir, name));
  for (const [name, isolation] of [
    ['fetch_proxied', 'namespace'],
    ['fetch_direct', 'none'],
  ]) {
    const sandbox = ['mode: process', 'command: ["python3", "./fetch_loop.py"]', 'stdout: json', `isolation: ${isolation}`, 'env: [PATH]'];
    writeFileSync(join(dir, `${name}.yaml`), fetchLoopManifest(name, `GETs the bench server in a loop (isolation ${isolation}).`, sandbox, port));
  }
  const egressHost = await host({ manifests: dir });
  try {
    const rounds = smoke ? 3 : quick ? 20 : 100;
    const fetches = smoke ? 3 : 20;
    const noNetwork = [];
    const withAllowList = [];
    const direct = [];
    const proxied = [];
    const ctxDirect = [];
    const ctxProxied = [];
    for (let i = 0; i < 5; i++) {
      await callOk(egressHost.client, 'echo_namespace', ECHO);
      await callOk(egressHost.client, 'echo_namespace_net', ECHO);
    }
    for (let i = 0; i < rounds; i++) {
      for (const [name, into] of [
        ['echo_namespace', noNetwork],
        ['echo_namespace_net', withAllowList],
      ]) {
        const start = performance.now();
        await callOk(egressHost.client, name, ECHO);
        into.push(performance.now() - start);
      }
    }
    const args = { url: `http://127.0.0.1:${port}/`, count: fetches };
    for (let i = 0; i < Math.max(2, rounds / 10); i++) {
      for (const [name, into] of [
        ['fetch_direct', direct],
        ['fetch_proxied', proxied],
      ]) {
        const result = await callOk(egressHost.client, name, args);
        // urllib opens a new connection per fetch: each one pays the bridge, the proxy's admission and its connect.
        into.push(...JSON.parse(result.content[0].text));
      }
    }
    // Warmed up (the isolate process started, the worker pool up), then interleaved.
    for (const name of ['ctx_fetch_direct', 'ctx_fetch_proxied']) await callOk(egressHost.client, name, { ...args, count: 2 });
    for (let i = 0; i < Math.max(3, rounds / 5); i++) {
      for (const [name, into] of [
        ['ctx_fetch_direct', ctxDirect],
        ['ctx_fetch_proxied', ctxProxied],
      ]) {
        const result = await callOk(egressHost.client, name, args);
        into.push(JSON.parse(result.content[0].text).perFetchMs);
      }
    }
    const summary = {
      noNetwork: summarize(noNetwork),
      withAllowList: summarize(withAllowList),
      fetchDirect: summarize(direct),
      fetchProxied: summarize(proxied),
      ctxFetchDirect: summarize(ctxDirect),
      ctxFetchProxied: summarize(ctxProxied),
    };
    return {
      ...summary,
      allowListRatio: round(summary.withAllowList.p50 / summary.noNetwork.p50),
      proxyRatio: round(summary.fetchProxied.p50 / summary.fetchDirect.p50),
      ctxFetchRatio: round(summary.ctxFetchProxied.p50 / summary.ctxFetchDirect.p50),
    };
  } finally {
    await egressHost.close();
    server.close();
  }
}

/** The HTTP section: toolhost over HTTP and stdio against the SDK's own HTTP server, then telemetry off and on. */
async function benchHttp() {
  const tokenFile = join(scratch, 'bench-tokens');
  const { createHash } = await import('node:crypto');
  writeFileSync(tokenFile, `bench: ${createHash('sha256').update('bench-token').digest('hex')}\n`, { mode: 0o600 });
  const fromLog = (text) => /"url":"(http:[^"]+)"/.exec(text)?.[1];
  const fromStdout = (text) => /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text)?.[1];
  const sdkHttp = await connectHttp(process.execPath, [join(ROOT, 'scripts/bench/baseline-http-server.mjs')], fromStdout);
  const toolhostHttp = await connectHttp(
    process.execPath,
    [...hostArgs({ ...base, state: join(scratch, `state-${stateCount++}`) }), '--http', '127.0.0.1:0', '--auth-tokens', tokenFile, '--no-watch'],
    fromLog,
    {},
    { authorization: 'Bearer bench-token' },
  );
  const toolhostStdio = await host();
  const targets = { sdkHttp: [sdkHttp, 'echo'], toolhostHttp: [toolhostHttp, 'echo_isolate'], toolhostStdio: [toolhostStdio, 'echo_isolate'] };
  try {
    const measured = await interleaved(targets);
    return { targets: measured, telemetry: await benchTelemetry() };
  } finally {
    await Promise.allSettled([sdkHttp.close(), toolhostHttp.close(), toolhostStdio.close()]);
  }
}

/** Sequential latency and 8-in-flight throughput of each target, alternating in rounds after a warm-up. */
async function interleaved(targets) {
  const rounds = smoke ? 1 : 4;
  const per = Math.max(1, Math.floor(N / rounds));
  const durations = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
  const rates = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
  for (const [name, [target, tool]] of Object.entries(targets)) await timeCalls(target.client, tool, ECHO, 1, smoke ? 2 : 20).then(() => name);
  for (let round = 0; round < rounds; round++) {
    for (const [name, [target, tool]] of Object.entries(targets)) {
      durations[name].push(...(await timeCalls(target.client, tool, ECHO, per, 0)));
      rates[name].push(await throughput(target.client, tool, ECHO, per, 8));
    }
  }
  return Object.fromEntries(Object.keys(targets).map((name) => [name, { latency: summarize(durations[name]), throughput: round(median(rates[name]), 0) }]));
}

/** The same stdio host with telemetry off (default) and on (--otel, exporting to a local sink). */
async function benchTelemetry() {
  const { createServer } = await import('node:http');
  const sink = createServer((req, res) => req.resume().on('end', () => res.end('{}')));
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${sink.address().port}`;
  const off = await host();
  const on = await host({}, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
  try {
    const measured = await interleaved({ off: [off, 'echo_isolate'], on: [on, 'echo_isolate'] });
    return { off: measured.off.latency, on: measured.on.latency, offThroughput: measured.off.throughput, onThroughput: measured.on.throughput };
  } finally {
    await Promise.allSettled([off.close(), on.close()]);
    sink.close();
  }
}
