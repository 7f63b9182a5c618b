// Output a persistent process writes when nobody asked (SPEC section 3.1):
// between calls it has a byte budget of its own, and lines with an unknown id
// are logged at a bounded rate, so a process that floods between calls can
// neither grow the host's memory nor its log file; past the budget the pool
// kills and replaces it.
import type { Logger } from '../../log.js';
import { ByteBudget } from './output-cap.js';

/** Bytes (stdout and stderr together) a persistent process may write between two calls. */
export const MAX_UNSOLICITED_BYTES = 64 * 1024;

/** Log lines about ignored output per window; the rest are counted and reported with the next one. */
export const MAX_IGNORED_LOG_LINES = 5;
export const IGNORED_LOG_WINDOW_MS = 10_000;

/** A fresh budget for the gap between two calls. */
export function newIdleBudget(): ByteBudget {
  return new ByteBudget(MAX_UNSOLICITED_BYTES);
}

/** Logs "ignored output" events at most MAX_IGNORED_LOG_LINES per window, with the count left out. */
export class IgnoredOutputLog {
  private windowStartMs = Number.NEGATIVE_INFINITY;
  private loggedInWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly tool: string,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** One ignored line (`kind` is its envelope kind). */
  note(kind: string): void {
    const now = this.now();
    if (now - this.windowStartMs >= IGNORED_LOG_WINDOW_MS) {
      this.windowStartMs = now;
      this.loggedInWindow = 0;
    }
    if (this.loggedInWindow >= MAX_IGNORED_LOG_LINES) {
      this.suppressed++;
      return;
    }
    this.loggedInWindow++;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    this.logger.warn({ tool: this.tool, kind, ...(suppressed > 0 ? { suppressedLines: suppressed } : {}) }, 'persistent process answered an unknown id; ignored');
  }
}
