// Bench section `startup`: how soon a user is served, each figure from the
// process's spawn, medians over the rounds, against a bare SDK server's start
// (baseline-server.mjs: spawn to its `initialize` answer) in the same rounds.
// `toolhost --version` and `--help`; `validate` and `list` of the bundled
// manifests (the filesystem server among them) without a lock (the server is
// started to list its tools) and with one (its tools come from the pins); and
// `serve` with the bundled manifests: spawn to its `initialize` answer and to
// its first `tools/list` answer (which waits for the server to list). The
// servers are timed with the raw line client (line-client.mjs).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { connectLine } from './line-client.mjs';
import { ROOT, median, round, table } from './lib.mjs';

// As the client configurations start it (the .mcp.json `toolhost init` writes).
const TOOLHOST = ['--max-semi-space-size=4', join(ROOT, 'bin/toolhost.js')];
// Node's own start, --version and --help take about 120 ms each, and one start
// swings by a quarter on a shared machine: a median of 5 put --version 40 ms
// above --help in one run, where 40 interleaved starts of each gave the same
// figure. Each round starts the three this many times, interleaved (under 2 s).
const QUICK_STARTS_PER_ROUND = 4;

/** Runs the section: `rounds` starts of each target; `goal(name, met, figure)` records a target. */
export async function benchStartup({ rounds, log, goal }) {
  const scratch = mkdtempSync(join(tmpdir(), 'toolhost-bench-startup-'));
  const bundled = (workspace) => ['--manifests', join(ROOT, 'manifests'), '--workspace', workspace];
  const locked = join(scratch, 'locked');
  mkdirSync(locked);
  const samples = {};
  const add = (key, ms) => (samples[key] ??= []).push(ms);
  try {
    // The lock pins the bundled server's tools: written once (it starts the server).
    await timeProcess(process.execPath, [...TOOLHOST, 'lock', ...bundled(locked)]);
    for (let r = 0; r < rounds; r++) {
      const workspace = join(scratch, `ws-${r}`);
      mkdirSync(workspace);
      const bare = await timeServer(process.execPath, [join(ROOT, 'scripts/bench/baseline-server.mjs')]);
      add('bareSdkServer.initialize', bare.initializeMs);
      add('bareSdkServer.toolsList', bare.toolsListMs);
      for (let quick = 0; quick < QUICK_STARTS_PER_ROUND; quick++) {
        // Node's own start with the same flag, nothing loaded: the floor under --version and --help.
        add('bareNode', await timeProcess(process.execPath, ['--max-semi-space-size=4', '-e', '']));
        add('version', await timeProcess(process.execPath, [...TOOLHOST, '--version']));
        add('help', await timeProcess(process.execPath, [...TOOLHOST, '--help']));
      }
      add('validate.noLock', await timeProcess(process.execPath, [...TOOLHOST, 'validate', ...bundled(workspace)]));
      add('validate.lock', await timeProcess(process.execPath, [...TOOLHOST, 'validate', ...bundled(locked)]));
      add('list.noLock', await timeProcess(process.execPath, [...TOOLHOST, 'list', ...bundled(workspace)]));
      add('list.lock', await timeProcess(process.execPath, [...TOOLHOST, 'list', ...bundled(locked)]));
      const served = await timeServer(process.execPath, [...TOOLHOST, 'serve', ...bundled(workspace), '--state', join(scratch, `state-${r}`), '--no-watch']);
      add('serve.initialize', served.initializeMs);
      add('serve.toolsList', served.toolsListMs);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const result = { rounds, ms: Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, round(median(values))])) };
  const ms = result.ms;
  const bare = ms['bareSdkServer.initialize'];
  const rows = [
    ['bare SDK server: initialize', 'bareSdkServer.initialize'],
    ['bare SDK server: first tools/list', 'bareSdkServer.toolsList'],
    ['node -e "" (Node\'s own start)', 'bareNode'],
    ['toolhost --version', 'version'],
    ['toolhost --help', 'help'],
    ['validate (no lock: the server started)', 'validate.noLock'],
    ['validate (lock: tools from the pins)', 'validate.lock'],
    ['list (no lock)', 'list.noLock'],
    ['list (lock)', 'list.lock'],
    ['serve: initialize', 'serve.initialize'],
    ['serve: first tools/list', 'serve.toolsList'],
  ];
  log(
    `Start-up (ms from spawn, median of ${rounds} rounds, of ${rounds * QUICK_STARTS_PER_ROUND} starts for node -e "", --version and --help; bundled manifests, the filesystem server among them)`,
  );
  log(
    table(
      ['target', 'ms', 'over the bare SDK server'],
      rows.map(([label, key]) => [label, ms[key], key === 'bareSdkServer.initialize' ? '' : round(ms[key] - bare)]),
    ),
  );
  log('');
  goal('toolhost --version under 150 ms', ms.version < 150, `${ms.version} ms (node -e "" ${ms.bareNode} ms)`);
  goal('toolhost --help under 150 ms', ms.help < 150, `${ms.help} ms (node -e "" ${ms.bareNode} ms)`);
  goal('validate of the bundled manifests under 1 s (with a lock)', ms['validate.lock'] < 1000, `${ms['validate.lock']} ms`);
  goal('list of the bundled manifests under 1 s (with a lock)', ms['list.lock'] < 1000, `${ms['list.lock']} ms`);
  goal('serve answers initialize within 300 ms of its start', ms['serve.initialize'] <= 300, `${ms['serve.initialize']} ms (bare SDK server ${bare} ms)`);
  return result;
}

// Spawn → initialize answer → tools/list answer, then the server is closed.
async function timeServer(command, args) {
  const connection = await connectLine(command, args, { cwd: ROOT });
  const started = performance.now() - connection.startupMs;
  await connection.client.listTools();
  const toolsListMs = performance.now() - started;
  await connection.close();
  return { initializeMs: connection.startupMs, toolsListMs };
}

async function timeProcess(command, args) {
  const startedMs = performance.now();
  const child = spawn(command, args, { stdio: 'ignore', cwd: ROOT });
  await new Promise((resolve) => child.once('exit', resolve));
  return performance.now() - startedMs;
}
