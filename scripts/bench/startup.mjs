// Bench section `startup`: how soon a client is served. For `toolhost serve`
// with the bundled manifests (the filesystem server among them): the time from
// the process's spawn to its answer to `initialize`, and to its first
// `tools/list` answer (which waits for the server to list); `toolhost validate`
// of the bundled manifests as a whole process; and the same spawn-to-initialize
// and spawn-to-tools/list for a bare SDK server (baseline-server.mjs) in the
// same run. A raw line client (one JSON-RPC line out, its answer line in) times
// the server, not a client library. Medians over the rounds.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, round } from './lib.mjs';

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } };

/** Runs the section: `rounds` starts of each target. */
export async function benchStartup({ rounds, log }) {
  const scratch = mkdtempSync(join(tmpdir(), 'toolhost-bench-startup-'));
  const toolhost = (workspace, state) => [process.execPath, ['--no-node-snapshot', join(ROOT, 'bin/toolhost.js'), 'serve', '--manifests', join(ROOT, 'manifests'), '--workspace', workspace, '--state', state, '--no-watch']];
  const samples = { serve: [], bare: [], validate: [] };
  try {
    for (let round_ = 0; round_ < rounds; round_++) {
      const workspace = join(scratch, `ws-${round_}`);
      mkdirSync(workspace);
      samples.bare.push(await timeServer(process.execPath, [join(ROOT, 'scripts/bench/baseline-server.mjs')]));
      samples.serve.push(await timeServer(...toolhost(workspace, join(scratch, `state-${round_}`))));
      samples.validate.push(await timeProcess(process.execPath, ['--no-node-snapshot', join(ROOT, 'bin/toolhost.js'), 'validate', '--manifests', join(ROOT, 'manifests'), '--workspace', workspace]));
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const median = (values) => round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]);
  const result = {
    rounds,
    serve: { initializeMs: median(samples.serve.map((s) => s.initializeMs)), toolsListMs: median(samples.serve.map((s) => s.toolsListMs)) },
    bareSdkServer: { initializeMs: median(samples.bare.map((s) => s.initializeMs)), toolsListMs: median(samples.bare.map((s) => s.toolsListMs)) },
    validateMs: median(samples.validate),
  };
  log('Start-up (spawn to answer, median; serve has the bundled filesystem server configured):');
  log(`  serve:           initialize ${result.serve.initializeMs} ms, first tools/list ${result.serve.toolsListMs} ms`);
  log(`  bare SDK server: initialize ${result.bareSdkServer.initializeMs} ms, first tools/list ${result.bareSdkServer.toolsListMs} ms`);
  log(`  validate (bundled manifests, whole process): ${result.validateMs} ms; ratio to the bare server's tools/list ${round(result.validateMs / result.bareSdkServer.toolsListMs)}\n`);
  return result;
}

// Spawn → initialize answer → (initialized, tools/list) → tools/list answer, then end its stdin.
async function timeServer(command, args) {
  const startedMs = performance.now();
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = lineReader(child.stdout);
  child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
  await lines.answerTo(1);
  const initializeMs = performance.now() - startedMs;
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })}\n`);
  await lines.answerTo(2);
  const toolsListMs = performance.now() - startedMs;
  child.stdin.end();
  await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
  return { initializeMs, toolsListMs };
}

async function timeProcess(command, args) {
  const startedMs = performance.now();
  const child = spawn(command, args, { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return performance.now() - startedMs;
}

function lineReader(stream) {
  let partial = '';
  const waiting = new Map();
  const seen = new Set();
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    partial += chunk;
    for (let nl = partial.indexOf('\n'); nl !== -1; nl = partial.indexOf('\n')) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      let id;
      try {
        id = JSON.parse(line).id;
      } catch {
        continue;
      }
      seen.add(id);
      waiting.get(id)?.();
    }
  });
  return { answerTo: (id) => (seen.has(id) ? Promise.resolve() : new Promise((resolve) => waiting.set(id, resolve))) };
}
