// The one table of failure codes (SPEC section 5), with each code's default
// message and documented details. Code, tests, audit records and the code table
// of docs/clients.md branch on these strings; messages are for people only.
import { isRecord } from './config/guards.js';

/** Who is at fault decides the log level and the audit status. */
type ErrorKind = 'caller' | 'denied' | 'run' | 'cancelled' | 'internal';

/** How the failure reaches an MCP client. */
type ErrorSurface = 'jsonrpc' | 'result' | 'per_policy';

/**
 * What a caller (a model, an agent loop) should do next (SPEC section 5.2):
 * `retry` the same call (transient), `repair` the call and send it again, or
 * `stop` (repeating it will not help, or its effect is unknown).
 */
type Recovery = 'retry' | 'repair' | 'stop';
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

/** What a code says when nothing more specific is known, and the `details` it may carry. */
interface ErrorText {
  /** The default sentence: one sentence safe for the model. */
  readonly message: string;
  /** A sentence per `details.reason` that says more than `message`. */
  readonly byReason?: Readonly<Record<string, string>>;
  /** Each `details` key the code may carry, with its meaning (besides `recovery`, which every error has). */
  readonly details: Readonly<Record<string, string>>;
}

const SHUTTING_DOWN = 'The host is shutting down.';

/**
 * The default message and the documented `details` of each code (as the MCP SDK
 * documents `data` per error code). A failure that knows more (the rule, the tool,
 * the path) says it in its own sentence; every other says the table's.
 */
export const ERROR_TEXT = {
  malformed_request: {
    message: 'The request is malformed.',
    details: {
      reason: 'what the boundary refused (invalid_json, too_large, too_deep, duplicate_key, not_mcp_message...)',
      key: 'the refused member, as a path',
      maxBytes: 'with too_large: the largest message the host reads',
    },
  },
  unknown_tool: { message: 'There is no tool by that name.', details: { available: 'the names the caller may call, in tools/list order' } },
  invalid_arguments: {
    message: 'The arguments do not match the input schema of the tool.',
    details: { path: 'the failing path in the arguments', keyword: 'the JSON Schema keyword that failed', expected: 'the expected schema there' },
  },
  policy_denied: {
    message: 'The policy refused this call.',
    details: {
      rule: 'the file and line of the rule that decided',
      reason: "the rule's reason; an exclusion adds what it matched",
      paths: 'with protected_path_created: the protected paths the tool created',
      pinned: 'with definition_changed: the digest the lock pinned',
      current: 'with definition_changed: the digest of the definition offered now',
      failure: 'a rule that could not be evaluated: why (missing_argument...)',
    },
  },
  unclassified_tool: {
    message: 'The tool declares no side effect and the policy is strict.',
    details: { rule: 'the file and line of the strict rule', reason: "the rule's reason" },
  },
  approval_required: {
    message: 'This call needs an approval the client cannot give.',
    details: {
      rule: 'the rule that asks',
      approvalId: 'the id an operator approves (approvals by an operator)',
      expiresAt: 'when that approval expires',
      approveCommand: 'the command that approves it, with the journal it needs',
      state: 'pending: the approval is still waiting for an operator',
    },
  },
  approval_denied: {
    message: 'The approval was not given.',
    details: {
      rule: 'the rule that asked',
      reason: 'declined, cancelled, timeout, malformed, spent...',
      timeoutMs: 'how long the prompt waited',
      approvalId: 'the approval that was refused',
    },
  },
  call_limit: {
    message: 'This session has no calls left.',
    details: {
      reason: 'terminal, consecutive_failures or rate; absent for the call budget',
      limit: 'the cap that was reached',
      retryAfterMs: 'with reason rate: when the window admits a call again',
      rule: 'with reason rate: the rule of the window',
      calls: 'with reason rate: the calls the window allows',
      per: 'with reason rate: the window',
    },
  },
  sandbox_unavailable: {
    message: 'The sandbox this tool needs is not available on this host.',
    details: { reason: 'why it could not start', errno: 'the error code of a failed spawn' },
  },
  interrupted_side_effect: {
    message: 'An earlier call with this idempotency key may have had its effect.',
    details: { callId: 'the earlier call', state: 'what the journal knows of it' },
  },
  timeout: { message: 'The tool ran past its time limit.', details: { timeoutMs: "the call's time limit", durationMs: 'how long the run took' } },
  cancelled: {
    message: 'The call was cancelled.',
    byReason: { shutdown: SHUTTING_DOWN, runner_closed: SHUTTING_DOWN },
    details: { reason: 'shutdown or runner_closed when the host is closing; absent for a cancel' },
  },
  memory_limit: {
    message: 'The tool exceeded its memory limit.',
    details: {
      memoryMb: "the tool's memory limit",
      reason: 'cgroup_oom, catastrophic_oom or top_level_out_of_memory: who noticed',
      stderrTail: "the end of the process's stderr",
      server: 'the upstream server that was killed',
    },
  },
  output_limit: {
    message: 'The tool wrote more output than its limit allows.',
    details: {
      reason: 'flood_cap (the runner stopped the tool) or host_only_too_large',
      bytes: 'the bytes seen',
      limit: 'the inline budget, or with flood_cap the cap',
      uri: 'where the whole result is stored',
    },
  },
  tool_error: {
    message: 'The tool failed.',
    details: {
      exitCode: "a process tool's exit code",
      stderrTail: "the end of the process's stderr",
      modelError: "true: the tool's own refusal, its parts after the code line",
      reason: 'load_failed: the tool module did not load',
      errorCode: "the code of the error a tool's ctx call threw (host_not_found...)",
      upstreamError: "true: an upstream server's error",
      jsonRpcCode: "the upstream server's JSON-RPC error code",
    },
  },
  tool_crashed: {
    message: 'The tool crashed.',
    details: {
      exitCode: 'the exit code',
      signal: 'the signal that ended it',
      stderrTail: "the end of the process's stderr",
      reason: 'isolate_reset, protocol_violation, top_level_crashed, worker_error...',
    },
  },
  invalid_output: {
    message: 'The tool produced output that is not valid for its declared format.',
    details: {
      reason: 'what was refused (invalid_utf8, output_schema, mime_not_allowed, bad_base64, host_only_leak...)',
      bytes: 'the bytes read',
      path: 'where in the output',
      part: "the index of the tool output's part",
    },
  },
  internal: {
    message: 'The host failed while running the tool.',
    byReason: {
      disk_full: 'The host could not journal this call because its disk is full, so the tool did not run; try again once there is space.',
      journal_unavailable: 'The host could not journal this call because its journal is not answering, so the tool did not run; try again.',
    },
    details: { reason: 'journal_unavailable or disk_full (an error result), queue_full, host_not_started (serve did not start)...', stage: 'the stage it happened in' },
  },
} as const satisfies Record<ErrorCode, ErrorText>;

/** The table's sentence for `code`, or for its `reason` when the table has one. */
export function defaultMessage(code: ErrorCode, reason?: unknown): string {
  const text: ErrorText = ERROR_TEXT[code];
  return (typeof reason === 'string' ? text.byReason?.[reason] : undefined) ?? text.message;
}

/** A HostError of `code` with the table's sentence (the one for `details.reason` when there is one). */
export function hostError(code: ErrorCode, details: ErrorDetails = {}, options?: { cause?: unknown; recovery?: Recovery; content?: ErrorContent }): HostError {
  return new HostError(code, defaultMessage(code, details['reason']), details, options);
}

/**
 * The causes of an `internal` the host knows (SPEC 5.2): the journal cannot be
 * written before the tool runs. Such an `internal` is an `isError` result the
 * caller can read and retry; any other `internal` is a defect, a JSON-RPC -32603.
 */
const INTERNAL_RESULT_REASONS = ['journal_unavailable', 'disk_full'] as const;
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
type ErrorContent = readonly Readonly<Record<string, unknown>>[];

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
