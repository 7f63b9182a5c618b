// The bounds the isolate process applies before anything crosses to the host:
// the same values as ISOLATE_WIRE_LIMITS in src/runner/wire.ts, which this side
// cannot import at run time (test/unit/sandbox/isolate-limits.test.ts keeps the
// two equal). Plain ESM, no imports.
export const LIMITS = Object.freeze({
  maxHeaderBytes: 64 * 1024,
  maxMessageChars: 4000,
  maxEventsPerCall: 1000,
  maxEventBytesPerCall: 256 * 1024,
  maxDenialsPerCall: 100,
  maxTargetChars: 512,
  maxUrlChars: 8192,
  maxFetchHeaderBytes: 32 * 1024,
  maxIvmMessageChars: 8192,
});
