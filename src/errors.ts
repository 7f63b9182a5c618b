// The one table of failure codes (SPEC section 5). Code, tests, audit records
// and the code table of docs/clients.md branch on these strings; messages are for people only.
import { isRecord } from './config/guards.js';

/** Who is at fault decides the log level and the audit status. */
export type ErrorKind = 'caller' | 'denied' | 'run' | 'cancelled' | 'internal';

/** How the failure reaches an MCP client. */
export type ErrorSurface = 'jsonrpc' | 'result' | 'per_policy';

/**
 * What a caller (a model, an agent loop) should do next (SPEC section 5.2):
 * `retry` the same call (transient), `repair` the call and send it again, or
 * `stop` (repeating it will not help, or its effect is unknown).
 */
export type Recovery = 'retry' | 'repair' | 'stop';
export const RECOVERIES: readonly Recovery[] = ['retry', 'repair', 'stop'];

export interface ErrorInfo {
  readonly kind: ErrorKind;
  readonly surface: ErrorSurface;
  readonly auditStatus: 'rejected' | 'denied' | 'failed' | 'cancelled';
  readonly logLevel: 'info' | 'warn' | 'error';
  /** For an idempotent tool; see recoveryOf for the codes whose answer depends on the tool. */
  readonly recovery: Recovery;
}

export const ERRORS = {
  malformed_request: { kind: 'caller', surface: 'jsonrpc', auditStatus: 'rejected', logLevel: 'info', recovery: 'stop' },
  unknown_tool: { kind: 'caller', surface: 'per_policy', auditStatus: 'rejected', logLevel: 'info', recovery: 'repair' },
  invalid_arguments: { kind: 'caller', surface: 'per_policy', auditStatus: 'rejected', logLevel: 'info', recovery: 'repair' },
  policy_denied: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info', recovery: 'stop' },
  unclassified_tool: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info', recovery: 'stop' },
  approval_required: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info', recovery: 'stop' },
  approval_denied: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info', recovery: 'stop' },
  call_limit: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'info', recovery: 'stop' },
  sandbox_unavailable: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'warn', recovery: 'retry' },
  interrupted_side_effect: { kind: 'denied', surface: 'result', auditStatus: 'denied', logLevel: 'warn', recovery: 'stop' },
  timeout: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn', recovery: 'retry' },
  cancelled: { kind: 'cancelled', surface: 'result', auditStatus: 'cancelled', logLevel: 'info', recovery: 'stop' },
  memory_limit: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn', recovery: 'repair' },
  output_limit: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn', recovery: 'repair' },
  tool_error: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn', recovery: 'repair' },
  tool_crashed: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn', recovery: 'retry' },
  invalid_output: { kind: 'run', surface: 'result', auditStatus: 'failed', logLevel: 'warn', recovery: 'repair' },
  internal: { kind: 'internal', surface: 'jsonrpc', auditStatus: 'failed', logLevel: 'error', recovery: 'retry' },
} as const satisfies Record<string, ErrorInfo>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * The causes of an `internal` the host knows (SPEC 5.2): the journal cannot be
 * written before the tool runs. Such an `internal` is an `isError` result the
 * caller can read and retry; any other `internal` is a defect, a JSON-RPC -32603.
 */
export const INTERNAL_RESULT_REASONS = ['journal_unavailable', 'disk_full'] as const;
export type InternalResultReason = (typeof INTERNAL_RESULT_REASONS)[number];

/** Whether `error` is an `internal` with a known cause, answered as a result. */
export function isInternalResult(error: { readonly code: ErrorCode; readonly details: ErrorDetails }): boolean {
  return error.code === 'internal' && (INTERNAL_RESULT_REASONS as readonly unknown[]).includes(error.details['reason']);
}

/**
 * The recovery of a failure of a tool: the table's, except that a timeout or a
 * cancellation of a non-idempotent tool is `stop` (its effect is unknown, so
 * running it again could do it twice).
 */
export function recoveryOf(code: ErrorCode, tool?: { readonly idempotent: boolean }): Recovery {
  if ((code === 'timeout' || code === 'cancelled') && tool && !tool.idempotent) return 'stop';
  return (ERRORS[code] as ErrorInfo).recovery;
}

/**
 * The `data` of a JSON-RPC error for a host code: the code, its facts and its
 * recovery (SPEC 5.2: every error carries one, protocol faults too).
 */
export function errorData<C extends ErrorCode, D extends Record<string, unknown> = Record<never, never>>(
  code: C,
  details?: D,
  recovery: Recovery = recoveryOf(code),
): { code: C; recovery: Recovery } & D {
  return { code, ...(details ?? ({} as D)), recovery };
}

/** The error with the recovery recoveryOf gives for this tool (the same object when nothing changes). */
export function withToolRecovery(error: HostError, tool: { readonly idempotent: boolean } | undefined): HostError {
  const recovery = recoveryOf(error.code, tool);
  if (recovery !== 'stop' || error.recovery === 'stop') return error;
  return new HostError(error.code, error.message, error.details, { cause: error.cause ?? error, recovery, content: error.content });
}

/** Model-visible content an error result carries after its `code:` line (a model_error's parts). */
export type ErrorContent = readonly Readonly<Record<string, unknown>>[];

/** Codes a runner may return: the tool ran (or was stopped) and failed. */
export type RunCode =
  'timeout' | 'cancelled' | 'memory_limit' | 'output_limit' | 'tool_error' | 'tool_crashed' | 'invalid_output' | 'sandbox_unavailable' | 'policy_denied' | 'internal';

/** Facts about a failure: rule, limit, bytes, exit code, signal. Plain data only. */
export type ErrorDetails = Record<string, unknown>;

/** A failure the host decided; `message` is one sentence safe for the model (no path, no secret). */
export class HostError extends Error {
  /** What the caller should do next; the table's unless the host knew better (recoveryOf). */
  readonly recovery: Recovery;
  /** Extra model-visible blocks after the `code:` line; empty for most errors. */
  readonly content: ErrorContent;

  /** The facts, with times as ISO 8601 and durations in whole milliseconds (readableDetails). */
  readonly details: ErrorDetails;

  constructor(
    readonly code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    options?: { cause?: unknown; recovery?: Recovery; content?: ErrorContent },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'HostError';
    this.details = readableDetails(details);
    this.recovery = options?.recovery ?? (ERRORS[code] as ErrorInfo).recovery;
    this.content = options?.content ?? [];
  }

  get info(): ErrorInfo {
    return ERRORS[this.code];
  }
}

/**
 * Details as a person and a model read them, whichever stage wrote them: a time
 * (`…At`, epoch milliseconds) as ISO 8601, a duration (`…Ms`) in whole milliseconds
 * (performance.now() differences carry float noise such as 1000.9163349999999).
 * Nested objects get the same, a few levels down; everything else is kept as given.
 */
export function readableDetails(details: ErrorDetails, depth = 0): ErrorDetails {
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(details)) {
    const readable = readableDetail(key, value, depth);
    if (readable === value) continue;
    copy ??= { ...details };
    copy[key] = readable;
  }
  return copy ?? details;
}

function readableDetail(key: string, value: unknown, depth: number): unknown {
  if (typeof value === 'number' && Number.isFinite(value)) {
    // 1e11 ms is 1973: a smaller *At is not an epoch time (a count, an offset) and is left alone.
    if (key.endsWith('At') && value > 1e11 && value < 1e14) return new Date(value).toISOString();
    if (key.endsWith('Ms') && !Number.isInteger(value)) return Math.round(value);
    return value;
  }
  if (depth < 3 && isRecord(value) && Object.getPrototypeOf(value) === Object.prototype) {
    return readableDetails(value, depth + 1);
  }
  return value;
}

/** Type guard for values crossing a catch. */
export function isHostError(value: unknown): value is HostError {
  return value instanceof HostError;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}
