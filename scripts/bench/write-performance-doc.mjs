// Writes docs/performance.md from one bench run's results (bench-results.json):
// how to reproduce the run, then that run's figures, nothing else. Usage:
//   node scripts/bench/write-performance-doc.mjs bench-results.json [docs/performance.md]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { latencyRows, LATENCY_HEADER, stageTable } from './latency-rows.mjs';
import { ROOT, table } from './lib.mjs';

const [input, output = join(ROOT, 'docs/performance.md')] = process.argv.slice(2);
if (input === undefined) {
  process.stderr.write('usage: node scripts/bench/write-performance-doc.mjs bench-results.json [docs/performance.md]\n');
  process.exit(2);
}
const results = JSON.parse(readFileSync(input, 'utf8'));
writeFileSync(output, render(results));
process.stdout.write(`wrote ${output}\n`);

function render(r) {
  const parts = [
    '# Performance',
    '',
    '`npm run bench` (`scripts/bench/`) measures toolhost against an unsandboxed MCP SDK server',
    '(the peer) serving the same echo tool over stdio, in one run on one machine, and writes',
    '`bench-results.json` (`--out FILE` to write elsewhere). `--quick` runs fewer iterations,',
    '`--smoke` a handful per section (it checks no numbers), `--only latency,startup` some sections.',
    'Each target is printed as met or missed at the end of the run. To reproduce this page:',
    '',
    '```sh',
    'npm run build && npm run bench && node scripts/bench/write-performance-doc.mjs bench-results.json',
    '```',
    '',
    'Latency and throughput are timed with a raw line client (one JSON-RPC line out, its answer',
    'line in, the same code for the peer and every mode), so they time the server; the SDK',
    "client's figures are a second column. A mode's floor is what its calls cannot avoid: a fresh",
    "isolated-vm context, timed in a process with the isolate process's Node flags (isolate), a",
    'worker-thread message round trip (worker), a line through a child and back (persistent), a',
    'raw spawn (one-shot process), bare bubblewrap with a pid namespace (one-shot in a namespace).',
    '"Over floor" is p50 minus the peer\'s p50 minus the floor\'s p50, per round, median of the rounds.',
    '',
    `## The run`,
    '',
    `Node ${r.machine?.node ?? '?'}, ${r.machine?.cpus ?? '?'} CPUs${r.machine?.loadAverage ? `, load average ${r.machine.loadAverage.join(' ')} at the start` : ''}${r.machine?.date ? `, ${r.machine.date}` : ''}${r.quick ? ' (`--quick`)' : ''}${r.smoke ? ' (`--smoke`: numbers not meaningful)' : ''}.`,
    '',
  ];
  if (Array.isArray(r.goals) && r.goals.length > 0) {
    parts.push(
      '### Targets',
      '',
      markdownTable(
        ['target', 'result', 'figure'],
        r.goals.map((g) => [g.name, g.met ? 'met' : 'missed', g.figure]),
      ),
      '',
    );
  }
  const latency = r.latency;
  if (latency?.rawClient) {
    parts.push('### Latency and throughput (ms; calls/s with 8 in flight)', '');
    parts.push(markdownTable(LATENCY_HEADER, latencyRows(latency)), '');
    if (latency.floors)
      parts.push(
        markdownTable(
          ['floor', 'p50', 'p99'],
          Object.entries(latency.floors).map(([k, f]) => [k, f.p50, f.p99]),
        ),
        '',
      );
    if (latency.isolateCeiling)
      parts.push(
        `Isolate ceiling from the fresh-context floor alone: ${latency.isolateCeiling.callsPerSecond} calls/s; isolate calls reached ${latency.isolateCeiling.share} of it.`,
        '',
      );
    if (latency.stages) {
      const { header, rows } = stageTable(latency.stages);
      parts.push('Host time per stage of one sequential call, p50 (µs):', '', markdownTable(header, rows), '');
    }
  }
  if (r.startup?.ms) parts.push('### Start-up (ms from spawn, median)', '', markdownTable(['target', 'ms'], Object.entries(r.startup.ms)), '');
  if (r.scale) {
    parts.push(
      '### Scale',
      '',
      markdownTable(
        ['manifests', 'initialize ms', 'then tools/list ms', 'loaded ms', 'idle RSS MB'],
        Object.entries(r.scale).map(([k, v]) => [k, v.startupMs, v.toolsListMs, v.loadedMs, v.idleRssMb]),
      ),
      '',
    );
    if (r.rss) parts.push(`RSS over ${r.rss.calls} isolate calls after the warm-up (MB): ${r.rss.samplesMb.join(' ')}; growth ${r.rss.growthMb} MB.`, '');
  }
  if (r.kill)
    parts.push('### Kill after the deadline', '', `p50 ${r.kill.p50} ms, p99 ${r.kill.p99} ms, orphans ${r.kill.orphans}, left after close ${r.kill.leftAfterClose}.`, '');
  if (r.upstream)
    parts.push(
      '### An upstream server (server-filesystem list_directory)',
      '',
      markdownTable(
        ['target', 'p50', 'p99'],
        [
          ['direct', r.upstream.direct.p50, r.upstream.direct.p99],
          ['through toolhost', r.upstream.throughToolhost.p50, r.upstream.throughToolhost.p99],
        ],
      ),
      '',
    );
  if (r.http?.targets)
    parts.push(
      '### Over HTTP',
      '',
      markdownTable(
        ['target', 'p50', 'p99', 'calls/s'],
        Object.entries(r.http.targets).map(([k, t]) => [k, t.latency.p50, t.latency.p99, t.throughput]),
      ),
      '',
    );
  if (r.spill)
    parts.push(
      '### Artifact spill',
      '',
      markdownTable(
        ['size', 'ms', 'MB/s'],
        Object.entries(r.spill).map(([k, v]) => [k, v.ms, v.mbPerSecond]),
      ),
      '',
    );
  if (r.journalChain?.groupCommit) {
    parts.push(
      '### Records before answers',
      '',
      "A read-only call's record committed before its answer (now) against the answer sent first and the record",
      'committed later (before), on the SQLite store as `serve` opens it. Both orders commit the same records, so a',
      'run with 8 in flight ends once they are committed; the orders take turns, and each figure is the median of the rounds.',
      '',
      markdownTable(
        ['order', 'p50', 'p99', 'calls/s (8 in flight)'],
        Object.entries(r.journalChain.groupCommit).map(([k, v]) => [k, v.sequential.p50, v.sequential.p99, v.callsPerSecond8]),
      ),
      '',
    );
  }
  return `${parts.join('\n').trimEnd()}\n`;
}

function markdownTable(header, rows) {
  return table(header, rows, 'markdown');
}
