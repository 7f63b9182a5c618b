// The latency section's tables as header and rows, built once from a run's
// results: the terminal (latency.mjs) and docs/performance.md
// (write-performance-doc.mjs) print the same figures in the same columns.

export const LATENCY_HEADER = [
  'target',
  'p50',
  'p99',
  'ratio',
  'over peer',
  'floor',
  'over floor',
  'calls/s',
  'throughput ratio',
  'CPU µs/call (server tree, main thread)',
  'SDK p50',
  'SDK ratio',
  'SDK calls/s',
];

/** One row per target of the raw-client column, with its SDK-client figures last. */
export function latencyRows(latency) {
  return Object.entries(latency.rawClient).map(([name, t]) => {
    const sdk = latency.sdkClient?.[name] ?? {};
    const cpu = latency.cpuPerCallUs?.[name];
    return [
      name,
      t.p50,
      t.p99,
      t.ratio,
      t.overPeerMs,
      t.floor ? `${t.floor} ${latency.floors?.[t.floor]?.p50}` : '',
      t.overFloorMs ?? '',
      t.callsPerSecond,
      t.throughputRatio,
      cpu ? `${cpu.serverTree} (${cpu.mainThread})` : '',
      sdk.p50 ?? '',
      sdk.ratio ?? '',
      sdk.callsPerSecond ?? '',
    ];
  });
}

/** The host's time per stage of a sequential call: header and one row per tool (p50, µs). */
export function stageTable(stages) {
  const names = [...new Set(Object.values(stages).flatMap((byStage) => Object.keys(byStage)))];
  return {
    header: ['tool', ...names],
    rows: Object.entries(stages).map(([tool, byStage]) => [tool, ...names.map((stage) => byStage[stage]?.p50Us ?? '')]),
  };
}
