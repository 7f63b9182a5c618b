// What the protocol layer asks of telemetry (SPEC section 6.2). The
// OpenTelemetry SDK lives behind this interface in otel.ts and is imported
// only when telemetry is on; with it off, the host holds no Telemetry at all.
import type { CallTrace } from './call-trace.js';

/** What is known of a tools/call when it arrives. No argument or result content. */
export interface CallSpanInfo {
  readonly tool: string;
  readonly requestId: string | number;
  /** The MCP revision of the request (negotiated or from its envelope). */
  readonly protocolVersion: string | undefined;
  /** The request's `_meta`: only `traceparent` / `tracestate` are read from it. */
  readonly meta: Readonly<Record<string, unknown>>;
}

/** One call's span; the supervisor sees it as a CallTrace. */
export interface CallSpan extends CallTrace {
  /** Ends the stage span open now and the call span; `errorType` is the error code, undefined on success. */
  end(errorType: string | undefined): void;
}

export interface Telemetry {
  startCall(info: CallSpanInfo): CallSpan;
  /** Flushes and stops the exporters. */
  shutdown(): Promise<void>;
}
