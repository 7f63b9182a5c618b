// Event-loop delay of the host, for the bench: when TOOLHOST_EVENT_LOOP_STATS
// names a file, the host samples its loop delay and writes a summary there on
// shutdown. It measures how long anything (a spawn, a sync parse) blocked the
// thread that serves every call. Only the bench sets the variable.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface EventLoopStats {
  readonly maxMs: number;
  readonly p99Ms: number;
  readonly p50Ms: number;
  readonly meanMs: number;
}

/** Starts sampling when the env asks for it; the returned function writes the stats (call it on shutdown). */
export function startEventLoopStats(env: NodeJS.ProcessEnv = process.env): () => void {
  const file = env['TOOLHOST_EVENT_LOOP_STATS'];
  if (!file) return () => {};
  // 1 ms resolution: the bench's target is "no stall over 1 ms".
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  // SIGUSR2 starts the measurement over: the bench sends it after warm-up, so
  // start-up (config parsing, the first isolate) is not counted as a stall.
  process.on('SIGUSR2', () => histogram.reset());
  return () => {
    histogram.disable();
    const ms = (ns: number) => ns / 1e6;
    const round = (value: number) => Math.round(value * 100) / 100;
    // The histogram counts the sampling interval itself; subtract it to get the stall.
    const stats: EventLoopStats = {
      maxMs: round(Math.max(0, ms(histogram.max) - 1)),
      p99Ms: round(Math.max(0, ms(histogram.percentile(99)) - 1)),
      p50Ms: round(Math.max(0, ms(histogram.percentile(50)) - 1)),
      meanMs: round(Math.max(0, ms(histogram.mean) - 1)),
    };
    writeFileSync(file, JSON.stringify(stats));
  };
}
