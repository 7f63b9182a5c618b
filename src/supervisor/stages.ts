// The ordered stages of one tool call (SPEC section 5), in the order
// supervisor.ts enters them, one file each under stages/ (named as the stage;
// test/unit/architecture/architecture-page.test.ts holds the folder, this list
// and the stage tables of docs/architecture.md and the README to one another).
// The names are used in the call's log line, error context, trace spans and
// the bench's stage times, so a refusal can always be traced to the one stage
// (and the one file) that decided it.

export const STAGES = [
  /** Call budget, a concurrency slot in FIFO order, an already-cancelled request. */
  'session-limits',
  /** The tool by name, or the onUnknownTool rewrite. */
  'lookup',
  /** The tool's policy decision (policy/tool-decision.ts): excluded, denied by name, class, pin or principal; shadow decisions logged. */
  'policy',
  /** Arguments against the compiled input schema; `_meta.idempotencyKey` read. */
  'validate-args',
  /** Rules on arguments (deny, ask, shadow), then the rate windows (call_limit). */
  'rules',
  /** Elicitation, input_required or approval_required, when the decision is ask. */
  'approval',
  /** Replay of a completed call with the same key, refusal of an interrupted one. */
  'idempotency',
  /** Write-ahead journal entry for every non-read-only call. */
  'journal',
  /** The sandbox runner with its timeout and the call's control. */
  'run',
  /** UTF-8, strict JSON, output schema, redaction, byte limit. */
  'result-checks',
  /** The journal record, the end event and the log line, from `finally`. */
  'finish',
] as const;

export type Stage = (typeof STAGES)[number];
