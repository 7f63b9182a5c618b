// The ordered stages of one tool call (SPEC section 5), in the order
// supervisor.ts enters them (test/unit/supervisor/supervisor.test.ts holds it
// to this list). The names are used in the call's log line, error context,
// trace spans and the bench's stage times, so a refusal can always be traced
// to the one stage (and the one file) that decided it.

export const STAGES = [
  /** Call budget, a concurrency slot in FIFO order, an already-cancelled request: session-limits.ts */
  'session-limits',
  /** The tool by name, or the onUnknownTool rewrite: lookup.ts */
  'lookup',
  /** Excluded by the policy as declared, or denied by name or class (policy/decide.ts): policy.ts */
  'exposure',
  /** Arguments against the compiled input schema: validate-args.ts */
  'validate-args',
  /** Rules on arguments (deny or ask), rate windows (call_limit), what a shadow policy would deny: policy.ts */
  'policy',
  /** Elicitation, input_required or approval_required: approval.ts */
  'approval',
  /** `_meta.idempotencyKey` (read at validate-args): replay, mismatch or interrupted, after policy and approval: idempotency.ts */
  'idempotency',
  /** Write-ahead journal entry for every non-read-only call: journal-entry.ts */
  'journal',
  /** The sandbox runner with its timeout and the request's signal: run.ts */
  'run',
  /** UTF-8, strict JSON, output schema, redaction, byte limit: result-checks.ts, result-shape.ts */
  'result-checks',
  /** The journal record, the end event and the log line, from `finally`: supervisor.ts */
  'finish',
] as const;

export type Stage = (typeof STAGES)[number];
