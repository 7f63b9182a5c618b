// The bounds the isolate process applies before anything crosses to the host,
// and the host checks again on arrival: one module both sides import at run
// time. Plain ESM, no imports.
export const ISOLATE_WIRE_LIMITS = Object.freeze({
  /** Largest header the host reads (log lines, paths, URLs and messages fit well inside). */
  maxHeaderBytes: 64 * 1024,
  /** Longest log or progress message, in characters (UTF-16 units). */
  maxMessageChars: 4000,
  /** Log and progress events one call may send. */
  maxEventsPerCall: 1000,
  /** UTF-8 bytes of log and progress messages one call may send in all; the rest are dropped. */
  maxEventBytesPerCall: 256 * 1024,
  /** Refusals one call may report; further ones are still refused, not reported. */
  maxDenialsPerCall: 100,
  /** Longest denial target or error message, in characters. */
  maxTargetChars: 512,
  /** Longest URL a tool may pass to ctx.fetch, in characters. */
  maxUrlChars: 8192,
  /** UTF-8 bytes of a fetch request's header names and values together. */
  maxFetchHeaderBytes: 32 * 1024,
  /** Longest isolated-vm or tool error message passed on. */
  maxIvmMessageChars: 8192,
});
