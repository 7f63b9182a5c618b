// How a finished call moves its session's counters (SPEC 5.2): a success ends
// the failure run (and a terminal tool's success ends the session's run), a
// failure of the codes in FAILURE_RUN_CODES extends it, anything else (a
// refusal, a cancel, an approval round) leaves it alone.
import type { CallContext } from './call-context.js';
import type { CallEnd } from './stages/finish.js';
import type { SessionCounters } from './session-counters.js';

/** Counts the end of one call against its session. */
export function countOutcome(counters: SessionCounters, ctx: CallContext, end: CallEnd | undefined): void {
  if (end?.kind === 'result') counters.recordSuccess(ctx.view?.manifest, ctx.callId);
  else if (end?.kind === 'error') counters.recordFailure(end.error.code);
}
