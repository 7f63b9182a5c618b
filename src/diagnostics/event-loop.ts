// Event-loop delay of the host, for the bench: when TOOLHOST_EVENT_LOOP_STATS
// names a file, the host samples its loop delay and writes a summary there on
// shutdown. It measures how long anything (a spawn, a sync parse) blocked the
// thread that serves every call. Only the bench sets the variable.
import { writeFileSync } from 'node:fs';
import { constants, createHistogram, monitorEventLoopDelay, PerformanceObserver, type RecordableHistogram } from 'node:perf_hooks';

interface EventLoopStats {
  readonly maxMs: number;
  readonly p99Ms: number;
  readonly p50Ms: number;
  readonly meanMs: number;
  /**
   * Each synchronous stretch of the host's work to start a sandbox (building its
   * command line and cgroup; handing the request to the spawner): the part of a
   * spawn that can block this thread. The fork itself happens in the spawner process.
   */
  readonly sandboxStartWork: Summary;
  /** The host's garbage-collection pauses: they stall the loop whatever it was doing. */
  readonly gcPauses: Summary & { readonly byKind: Readonly<Record<string, Summary>> };
}

interface Summary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

// perf_hooks.constants.NODE_PERFORMANCE_GC_*: what kind of collection paused the loop.
const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak_callbacks',
};

// In microseconds; undefined unless the bench asked for stats.
let sandboxStartWork: RecordableHistogram | undefined;

/** Records `ms` of synchronous host work spent starting one sandbox (a no-op unless stats are on). */
export function recordSandboxStartWork(ms: number): void {
  sandboxStartWork?.record(Math.max(1, Math.round(ms * 1000)));
}

/** Starts sampling when the env asks for it; the returned function writes the stats (call it on shutdown). */
export function startEventLoopStats(env: NodeJS.ProcessEnv = process.env): () => void {
  const file = env['TOOLHOST_EVENT_LOOP_STATS'];
  if (!file) return () => {};
  // 1 ms resolution: the bench's target is "no stall over 1 ms".
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const startWork = createHistogram();
  sandboxStartWork = startWork;
  const gcPauses = createHistogram();
  const gcByKind = new Map<string, RecordableHistogram>();
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const microseconds = Math.max(1, Math.round(entry.duration * 1000));
      gcPauses.record(microseconds);
      const kind = GC_KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'other';
      let histogram = gcByKind.get(kind);
      if (histogram === undefined) gcByKind.set(kind, (histogram = createHistogram()));
      histogram.record(microseconds);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  // SIGUSR2 starts the measurement over: the bench sends it after warm-up, so
  // start-up (config parsing, the first isolate) is not counted as a stall.
  process.on('SIGUSR2', () => {
    histogram.reset();
    startWork.reset();
    gcPauses.reset();
    gcByKind.clear();
  });
  return () => {
    histogram.disable();
    gcObserver.disconnect();
    const ms = (ns: number) => ns / 1e6;
    const round = (value: number) => Math.round(value * 100) / 100;
    // The histogram counts the sampling interval itself; subtract it to get the stall.
    const stats: EventLoopStats = {
      maxMs: round(Math.max(0, ms(histogram.max) - 1)),
      p99Ms: round(Math.max(0, ms(histogram.percentile(99)) - 1)),
      p50Ms: round(Math.max(0, ms(histogram.percentile(50)) - 1)),
      meanMs: round(Math.max(0, ms(histogram.mean) - 1)),
      sandboxStartWork: summarize(startWork),
      gcPauses: { ...summarize(gcPauses), byKind: Object.fromEntries([...gcByKind].map(([kind, histogram]) => [kind, summarize(histogram)])) },
    };
    writeFileSync(file, JSON.stringify(stats));
  };
}

// A histogram of microseconds as milliseconds.
function summarize(histogram: RecordableHistogram): Summary {
  const round = (microseconds: number) => Math.round(microseconds / 10) / 100;
  if (histogram.count === 0) return { count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 };
  return { count: histogram.count, p50Ms: round(histogram.percentile(50)), p99Ms: round(histogram.percentile(99)), maxMs: round(histogram.max) };
}
