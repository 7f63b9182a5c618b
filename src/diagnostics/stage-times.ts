// Time spent in each stage of a call, for the bench: when TOOLHOST_STAGE_STATS
// names a file, the host keeps a histogram per tool and stage (microseconds)
// and writes a summary there on shutdown, so the bench can say where a call's
// time goes inside the host. Off (one undefined check per stage) otherwise.
import { writeFileSync } from 'node:fs';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

interface StageSummary {
  readonly count: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

/** tool → stage → summary, as written to the stats file. */
type StageStats = Record<string, Record<string, StageSummary>>;

// Undefined unless the bench asked for stats.
let byTool: Map<string, Map<string, RecordableHistogram>> | undefined;

/** True when stage times are being recorded (callers skip taking timestamps otherwise). */
export function stageTimesOn(): boolean {
  return byTool !== undefined;
}

/** Records `ms` spent by one call of `tool` in `stage` (a no-op unless stats are on). */
export function recordStageTime(tool: string, stage: string, ms: number): void {
  if (byTool === undefined) return;
  let stages = byTool.get(tool);
  if (stages === undefined) byTool.set(tool, (stages = new Map()));
  let histogram = stages.get(stage);
  if (histogram === undefined) stages.set(stage, (histogram = createHistogram()));
  histogram.record(Math.max(1, Math.round(ms * 1000)));
}

/** Starts recording when the env asks for it; the returned function writes the stats (call it on shutdown). */
export function startStageStats(env: NodeJS.ProcessEnv = process.env): () => void {
  const file = env['TOOLHOST_STAGE_STATS'];
  if (!file) return () => {};
  const tools = new Map<string, Map<string, RecordableHistogram>>();
  byTool = tools;
  // SIGUSR2 starts over, as for the event-loop stats: the bench sends it after warm-up.
  process.on('SIGUSR2', () => tools.clear());
  return () => {
    byTool = undefined;
    const stats: StageStats = {};
    for (const [tool, stages] of tools) {
      stats[tool] = Object.fromEntries([...stages].map(([stage, h]) => [stage, { count: h.count, p50Us: h.percentile(50), p99Us: h.percentile(99) }]));
    }
    writeFileSync(file, JSON.stringify(stats));
  };
}
