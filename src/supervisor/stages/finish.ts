// The finish stage (SPEC section 5 step 10), run from the supervisor's
// `finally` for every call however far it got: exactly one closing journal
// write — finish() for a call with a write-ahead record, record() for
// everything else (refusals, read-only calls, replays) — then the end event
// and the one log line, once that write is committed. A record that cannot be
// written withholds the answer.
import type { CallFinish } from '../../audit/call-record.js';
import { lostRecordReason } from '../../audit/lost-record-reason.js';
import { ERRORS, HostError } from '../../errors.js';
import { emitEnded, logCallEnd } from '../call-events.js';
import type { CallContext } from '../call-context.js';
import type { CallJournal } from './journal.js';

/** How a call ended, as the journal needs it. */
export type CallEnd =
  | { readonly kind: 'result'; readonly payloadHash: string | null; readonly payloadBytes: number | null; readonly replay: string | null }
  | { readonly kind: 'input_required' }
  | { readonly kind: 'error'; readonly error: HostError };

/**
 * The closing write, then the end event and the log line. Resolves to the error
 * that replaces the answer when the record could not be written. `alone`: no other
 * call is in flight (closeJournal).
 */
export async function finishCall(journal: CallJournal, ctx: CallContext, end: CallEnd | undefined, alone = false): Promise<HostError | undefined> {
  const durationMs = Date.now() - ctx.startedAt;
  let closing: CallEnd = end ?? { kind: 'error', error: new HostError('internal', 'The call ended without an outcome.', {}) };
  let unrecorded: HostError | undefined;
  try {
    await closeJournal(journal, ctx, closing, alone);
  } catch (error) {
    ctx.logger.error({ err: error, stage: ctx.stage }, 'could not write the journal record of a call');
    unrecorded = unrecordedCallError(error);
    closing = { kind: 'error', error: unrecorded };
  }
  emitEnded(ctx, closing, durationMs);
  logCallEnd(ctx, closing, durationMs);
  return unrecorded;
}

/**
 * The one closing write of a call; the call answers only once it is committed
 * (SPEC section 5 step 10). A read-only call without an idempotency key is group
 * committed with the other records of this event-loop turn (one transaction for
 * them all), or at once when the call is `alone` in flight (no other record would
 * join it: a client that waits for each answer); every other record is written on
 * its own (a key's record is what a repeat on any host replays).
 */
export function closeJournal(journal: CallJournal, ctx: CallContext, end: CallEnd, alone = false): Promise<void> {
  const finish = toFinish(ctx, end);
  if (ctx.journaled) return journal.finish(ctx.callId, finish);
  if (ctx.idempotencyKey === null && ctx.view?.manifest.sideEffect === 'read_only') return journal.recordSoon(ctx.toStart(), finish, alone);
  return journal.record(ctx.toStart(), finish);
}

/**
 * The answer of a call whose closing record could not be written: its result is
 * withheld (no answer without its record), as `internal` with the reason the gap
 * record will carry. The tool may have run: a non-read-only call's write-ahead
 * record says so, and becomes `interrupted` if its end is never written.
 */
function unrecordedCallError(error: unknown): HostError {
  return new HostError('internal', 'The journal could not record this call, so its result is withheld.', { reason: lostRecordReason(error), stage: 'journal' }, { cause: error });
}

// One object per call, built in place (this runs on every call): no spread of a partial finish.
function toFinish(ctx: CallContext, end: CallEnd): CallFinish {
  const endedAt = Date.now();
  const egressAdmitted = ctx.egress.admitted;
  const egressRefused = ctx.egress.refused;
  switch (end.kind) {
    case 'result':
      return {
        status: 'completed',
        errorCode: null,
        resultHash: end.payloadHash,
        resultBytes: end.payloadBytes,
        replay: ctx.idempotencyKey === null ? null : end.replay,
        endedAt,
        egressAdmitted,
        egressRefused,
      };
    case 'input_required':
      // Refused for this round: the client's retry with the signed state is a new call and a new record.
      return { status: 'denied', errorCode: 'approval_required', resultHash: null, resultBytes: null, replay: null, endedAt, egressAdmitted, egressRefused };
    case 'error':
      return { status: ERRORS[end.error.code].auditStatus, errorCode: end.error.code, resultHash: null, resultBytes: null, replay: null, endedAt, egressAdmitted, egressRefused };
  }
}
