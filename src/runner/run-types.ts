// The in-process interface of a runner: what the supervisor hands it and what
// it returns. The messages that cross to the far side are sandbox/shared/messages.d.mts.
import type { ErrorCode, RunCode, ErrorDetails } from '../errors.js';
import type { EgressAttempt, ProgressEvent, SandboxDenial, ToolLogLevel } from '../../sandbox/shared/messages.mjs';

export type { EgressAttempt, ProgressEvent, SandboxDenial, ToolLogLevel } from '../../sandbox/shared/messages.mjs';

/** What a tool produced, before the supervisor's result checks (SPEC section 5 step 9). */
export type RunOutput =
  /**
   * A JSON value, serialized. Not yet checked for depth or duplicate keys.
   * `parsed`: JSON.parse(json), when the runner had to parse it anyway (a persistent
   * process's whole line is parsed to prove it is JSON), so the supervisor's strict
   * scan of `json` is not followed by a second parse. Never set from across a boundary.
   */
  | { readonly type: 'json'; readonly json: string; readonly parsed?: unknown }
  /** Raw bytes of a `stdout: text` process tool. Not yet checked for UTF-8. */
  | { readonly type: 'text'; readonly bytes: Uint8Array }
  /** An upstream MCP server's CallToolResult (SPEC section 2.1), bounded in bytes, its blocks not yet checked. */
  | { readonly type: 'mcp'; readonly result: Readonly<Record<string, unknown>> };

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

/**
 * The one termination control of a call (supervisor/call-control.ts): the
 * request's cancel, the host's shutdown and the deadline, linked once, with the
 * first reason kept. A runner registers what to stop (`onStop`) instead of
 * arming timers or listening to signals of its own.
 */
export interface RunControl {
  /** Aborts once the call must stop, for any reason; for APIs that take a signal (Piscina). */
  readonly signal: AbortSignal;
  /** The call's wall-clock budget, from the effective limits (its deadline is already armed). */
  readonly timeoutMs: number;
  /** Why the call stops; undefined while it may go on. */
  readonly reason: ErrorCode | undefined;
  /** Resolves with the reason once the call stops. */
  readonly stopped: Promise<ErrorCode>;
  /** Stops the call for `reason` unless it already stopped; returns the reason that won (the first). */
  stop(reason: ErrorCode): ErrorCode;
  /** Calls `onStop` once when the call stops (now, if it has); returns the function that unregisters it. */
  onStop(onStop: (reason: ErrorCode) => void): () => void;
  /** What a stopped call reports: the reason's code, its one-sentence message and details. */
  failure(): { readonly code: RunCode; readonly message: string; readonly details: ErrorDetails };
  /**
   * Holds the deadline while the runner starts a sandbox for this call (a start never counts
   * against `timeoutMs`); returns the function that resumes it. Absent: nothing to hold.
   */
  pauseDeadline?(): () => void;
}

export interface RunOptions {
  /** Deadline, cancel and shutdown of this call. */
  readonly control: RunControl;
  readonly onProgress?: (event: ProgressEvent) => void;
  readonly onLog?: (level: ToolLogLevel, message: string) => void;
  readonly onDenied?: (denial: SandboxDenial) => void;
  /** Every network attempt of this call (journaled as counts). */
  readonly onEgress?: (attempt: EgressAttempt) => void;
}
