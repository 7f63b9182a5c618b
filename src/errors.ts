// The one table of failure codes (SPEC section 5). Code, tests, audit records
// and the README branch on these strings; messages are for people only.

/** Who is at fault decides the log level and the audit status. */
export type ErrorKind = 'caller' | 'denied' | 'run' | 'cancelled' | 'internal';

/** How the failure reaches an MCP client. */
export type ErrorSurface = 'jsonrpc' | 'result' | 'per_policy';

export interface ErrorInfo {
  readonly kind: ErrorKind;
  readonly surface: ErrorSurface;
  readonly auditStatus: 'rejected' | 'denied' | 'failed' | 'cancelled';
  readonly logLevel: 'info' | 'warn' | 'error';
}

export const ERRORS = {
  malformed_request: { kind: 'caller', surface: 'jsonrpc', auditStatus: 'rejected', logLevel: 'info' },
  unknown_tool: { kind: 'caller', surface: 'per_policy', auditStatus: 'rejected', logLevel: 'info' },
  invalid_arguments: { kind: 'caller', surface: 'per_policy', auditStatus: 'rejected', logLevel: 'info' },
  policy_denied: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info' },
  unclassified_tool: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info' },
  approval_required: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info' },
  approval_denied: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info' },
  call_limit: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info' },
  sandbox_unavailable: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'warn' },
  interrupted_side_effect: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'warn' },
  timeout: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn' },
  cancelled: { kind: 'cancelled', surface: 'result', auditStatus: 'cancelled', logLevel: 'info' },
  memory_limit: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn' },
  output_limit: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn' },
  tool_error: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn' },
  tool_crashed: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn' },
  invalid_output: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn' },
  internal: { kind: 'internal', surface: 'jsonrpc', auditStatus: 'failed', logLevel: 'error' },
} as const satisfies Record<string, ErrorInfo>;

export type ErrorCode = keyof typeof ERRORS;

/** Codes a runner may return: the tool ran (or was stopped) and failed. */
export type RunCode =
  | 'timeout'
  | 'cancelled'
  | 'memory_limit'
  | 'output_limit'
  | 'tool_error'
  | 'tool_crashed'
  | 'invalid_output'
  | 'sandbox_unavailable'
  | 'policy_denied'
  | 'internal';

/** Facts about a failure: rule, limit, bytes, exit code, signal. Plain data only. */
export type ErrorDetails = Record<string, unknown>;

/** A failure the host decided; `message` is one sentence safe for the model (no path, no secret). */
export class HostError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'HostError';
  }

  get info(): ErrorInfo {
    return ERRORS[this.code];
  }
}

/** Type guard for values crossing a catch. */
export function isHostError(value: unknown): value is HostError {
  return value instanceof HostError;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}
