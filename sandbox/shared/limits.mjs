// The bounds both sides apply to what a tool sends while it runs, the
// isolate process's bounds on everything that crosses to the host, and the
// time its start may give the tool's top level: one module both sides import
// at run time. Plain ESM, no imports.

/**
 * A call's progress, log and denial events, as every runner passes them on
 * (src/runner/events.ts): the far side cuts to these before sending, the host
 * counts again on arrival.
 */
export const EVENT_LIMITS = Object.freeze({
  /** Longest log or progress message, in characters (UTF-16 units). */
  maxMessageChars: 4000,
  /** Log and progress events one call may send. */
  maxEventsPerCall: 1000,
  /** UTF-8 bytes of log and progress messages one call may send in all; past it, messages are dropped. */
  maxEventBytesPerCall: 256 * 1024,
  /** Refusals one call may report; further ones are still refused, not reported. */
  maxDenialsPerCall: 100,
  /** Longest denial target, in characters. */
  maxTargetChars: 512,
  /** Longest denial operation or reason code, in characters. */
  maxCodeChars: 64,
});

/** What the isolate process bounds before anything crosses to the host (frames, fetch requests, errors). */
export const ISOLATE_WIRE_LIMITS = Object.freeze({
  ...EVENT_LIMITS,
  /** Largest header the host reads (log lines, paths, URLs and messages fit well inside). */
  maxHeaderBytes: 64 * 1024,
  /** Longest URL a tool may pass to ctx.fetch, in characters. */
  maxUrlChars: 8192,
  /** UTF-8 bytes of a fetch request's header names and values together. */
  maxFetchHeaderBytes: 32 * 1024,
  /** Longest isolated-vm or tool error message passed on. */
  maxIvmMessageChars: 8192,
});

/**
 * How long an isolate process's start may run the tool module's top level, ahead of any
 * call (the host waits this long and more for the start: ISOLATE_START_TIMEOUT_MS). A top
 * level's failure (its throw, its heap) is then the start's verdict however loaded the
 * machine is: a bomb that fills a 32 MB heap in 0.6 s idle took past 1 s at load 8 on two
 * cores, and its out-of-memory landed in the first call instead. A top level that runs
 * past it is cut, and each call runs its own within its deadline.
 */
export const START_TOP_LEVEL_TIMEOUT_MS = 10_000;
