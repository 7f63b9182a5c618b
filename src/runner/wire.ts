// The only shapes that cross into sandbox/: plain, structured-cloneable data.
// No Error object, no function, no host reference crosses a thread, isolate or
// process boundary.
import type { RunCode, ErrorDetails } from '../errors.js';

/** What a tool produced, before the supervisor's result checks (SPEC section 5 step 9). */
export type RunOutput =
  /** A JSON value, serialized. Not yet checked for depth or duplicate keys. */
  | { readonly type: 'json'; readonly json: string }
  /** Raw bytes of a `stdout: text` process tool. Not yet checked for UTF-8. */
  | { readonly type: 'text'; readonly bytes: Uint8Array };

/** The one outcome type of every runner: runners never throw for tool failures. */
export type RunOutcome =
  | { readonly ok: true; readonly output: RunOutput; readonly durationMs: number }
  | {
      readonly ok: false;
      readonly code: RunCode;
      /** One sentence, safe for the model. */
      readonly message: string;
      readonly details: ErrorDetails;
      readonly durationMs: number;
    };

/** One call handed to a runner. `args` is already validated against the input schema. */
export interface Job {
  readonly callId: string;
  readonly args: Readonly<Record<string, unknown>>;
}

export interface ProgressEvent {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export type ToolLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** A ctx.fs or ctx.fetch attempt refused by the sandbox's own checks (journaled by the supervisor). */
export interface SandboxDenial {
  readonly op: string;
  readonly target: string;
  readonly reason: string;
}

/** One attempt to reach the network (the egress proxy or ctx.fetch), admitted or refused. */
export interface EgressAttempt {
  /** `connect`: a CONNECT tunnel; `http`: a plain-HTTP request through the proxy; `fetch`: ctx.fetch; `malformed`: no usable request. */
  readonly kind: 'connect' | 'http' | 'fetch' | 'malformed';
  /** Canonical when admitted; as the tool wrote it (bounded) when refused. */
  readonly host: string;
  readonly port: number | null;
  readonly method: string | null;
  readonly admitted: boolean;
  /** A stable code when refused (host_not_allowed, address_loopback, method_not_allowed_for_class, …). */
  readonly reason: string | null;
  /** The address connected to, when admitted. */
  readonly address: string | null;
}

export interface RunOptions {
  /** Aborted when the client cancels or the host shuts down. */
  readonly signal: AbortSignal;
  /** Wall-clock budget for this call, from the effective limits. */
  readonly timeoutMs: number;
  readonly onProgress?: (event: ProgressEvent) => void;
  readonly onLog?: (level: ToolLogLevel, message: string) => void;
  readonly onDenied?: (denial: SandboxDenial) => void;
  /** Every network attempt of this call (journaled as counts). */
  readonly onEgress?: (attempt: EgressAttempt) => void;
}
