// Frames an isolate process sends for calls that have already ended (a ctx
// refusal that settled after its call answered, an event raced by a stop).
// They are harmless and dropped: never a reason to kill the process, which
// would fail other callers' calls of the same tool. They are still counted
// against the tool and reported in the log, at most once per interval, so a
// stream of them shows up without filling the log.
import type { Logger } from '../../log.js';

/** The shortest time between two log lines about one process's late frames. */
const LATE_FRAMES_LOG_INTERVAL_MS = 10_000;

export class LateFrames {
  /** Late frames since the last log line. */
  #unreported = 0;
  #total = 0;
  #lastLoggedMs = -Infinity;

  constructor(
    private readonly logger: Logger,
    private readonly tool: string,
    private readonly intervalMs: number = LATE_FRAMES_LOG_INTERVAL_MS,
  ) {}

  /** All late frames of this process so far. */
  get total(): number {
    return this.#total;
  }

  /** One frame of type `type` for a call that has ended: counted, logged when the interval allows. */
  note(type: string): void {
    this.#total += 1;
    this.#unreported += 1;
    const now = performance.now();
    if (now - this.#lastLoggedMs < this.intervalMs) return;
    this.#lastLoggedMs = now;
    this.#report(type);
  }

  /** The process ended: what was counted since the last line is logged. */
  flush(): void {
    if (this.#unreported > 0) this.#report(undefined);
  }

  #report(lastType: string | undefined): void {
    this.logger.warn(
      { tool: this.tool, lateFrames: this.#unreported, lateFramesTotal: this.#total, ...(lastType !== undefined ? { lastType: lastType.slice(0, 32) } : {}) },
      'isolate process sent frames for calls that had ended; dropped',
    );
    this.#unreported = 0;
  }
}
