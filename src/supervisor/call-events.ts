// What the caller and the log hear about a call besides its outcome: progress
// (redacted, and silent after a cancel), lifecycle events (tool.started, then
// tool.completed or tool.failed), and the one log line at the end, at the
// level the ERRORS table gives the code.
import { ERRORS } from '../errors.js';
import type { ProgressEvent } from '../runner/run-types.js';
import type { CallContext } from './call-context.js';
import type { CallEnd } from './stages/finish.js';
import type { Redactor } from './redact.js';
import type { LifecycleEvent } from './types.js';

/** Longest progress message forwarded, in characters. */
const MAX_PROGRESS_MESSAGE_CHARS = 1024;

/** Sends a lifecycle event; nothing is sent for a cancelled request (SPEC section 6). */
function emitEvent(ctx: CallContext, event: LifecycleEvent): void {
  if (ctx.control.aborted) return;
  try {
    ctx.request.onEvent?.(event);
  } catch (error) {
    ctx.logger.warn({ err: error, event: event.type }, 'lifecycle event listener threw');
  }
}

/** tool.started; from here on the call ends with tool.completed or tool.failed. */
export function emitStarted(ctx: CallContext): void {
  // No event is built for a client that did not ask for them (SPEC section 6): most do not.
  if (ctx.request.onEvent) emitEvent(ctx, { type: 'tool.started', callId: ctx.callId, tool: ctx.toolName });
  ctx.started = true;
}

/** tool.completed or tool.failed, only for a call that started. */
export function emitEnded(ctx: CallContext, end: CallEnd, durationMs: number): void {
  if (!ctx.started || !ctx.request.onEvent) return;
  const base = { callId: ctx.callId, tool: ctx.toolName, durationMs };
  emitEvent(ctx, end.kind === 'error' ? { type: 'tool.failed', ...base, code: end.error.code } : { type: 'tool.completed', ...base });
}

/** The progress callback handed to the runner: redacted, bounded, silent after a cancel. */
export function forwardProgress(ctx: CallContext, redact: Redactor): ((event: ProgressEvent) => void) | undefined {
  const forward = ctx.request.onProgress;
  if (!forward) return undefined;
  return (event) => {
    if (ctx.control.aborted) return;
    const message = event.message === undefined ? undefined : redact.cut(String(event.message), MAX_PROGRESS_MESSAGE_CHARS);
    try {
      forward({ ...event, ...(message !== undefined ? { message } : {}) });
    } catch (error) {
      ctx.logger.warn({ err: error }, 'progress listener threw');
    }
  };
}

/** The one log line of a call: its stage, decision, rule, approval and outcome. */
export function logCallEnd(ctx: CallContext, end: CallEnd, durationMs: number): void {
  const facts = { stage: ctx.stage, durationMs, decision: ctx.decision, rule: ctx.rule, approval: ctx.approval };
  if (end.kind === 'error') {
    const { code, details, cause } = end.error;
    ctx.logger[ERRORS[code].logLevel]({ ...facts, code, details, ...(cause !== undefined ? { err: cause } : {}) }, `call refused or failed: ${code}`);
  } else {
    ctx.logger.info(facts, end.kind === 'input_required' ? 'call waits for an approval' : 'call completed');
  }
}
