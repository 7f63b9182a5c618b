// The journal side of a call (SPEC section 7): the write-ahead `started`
// record for every non-read-only call before it runs, and exactly one closing
// write per call from the supervisor's `finally` — finish() for a journaled
// call, record() for everything else (refusals, read-only calls, replays).
import type { CallFinish } from '../audit/call-record.js';
import type { Journal } from '../audit/journal.js';
import { ERRORS, HostError } from '../errors.js';
import { lostRecordReason } from '../audit/lost-record-reason.js';
import type { CallContext } from './call-context.js';
import { resolveKeyHolder, type ReplayedResult } from './idempotency.js';

/** What the supervisor needs of the journal (both stores behind src/audit/journal.ts implement it). */
export type CallJournal = Pick<Journal, 'begin' | 'finish' | 'record' | 'recordSoon' | 'findByIdempotencyKey' | 'createApproval' | 'spendApproval' | 'takeRate'>;

/** How a call ended, as the journal needs it. */
export type CallEnd =
  | { readonly kind: 'result'; readonly payloadHash: string | null; readonly payloadBytes: number | null; readonly replay: string | null }
  | { readonly kind: 'input_required' }
  | { readonly kind: 'error'; readonly error: HostError };

/**
 * Writes the `started` record before a non-read-only call runs; read-only calls
 * are recorded at the end. The write claims the call's idempotency key on every
 * host of the journal: when another call won it meanwhile, nothing is written and
 * this returns that call's replay, or throws interrupted_side_effect (state
 * in_progress while it runs). A failed write throws: the tool does not run.
 */
export function beginJournal(journal: CallJournal, ctx: CallContext): Promise<ReplayedResult | undefined> | undefined {
  // A read-only call has no write-ahead record: nothing to wait for (undefined, at once, no promise).
  if (ctx.view?.manifest.sideEffect === 'read_only') return undefined;
  return writeAhead(journal, ctx);
}

async function writeAhead(journal: CallJournal, ctx: CallContext): Promise<ReplayedResult | undefined> {
  const begun = await journal.begin(ctx.toStart());
  if (begun.kind === 'held') {
    const replay = resolveKeyHolder(begun.holder, ctx.toolName, ctx.argsHash);
    // A held key always replays or refuses; never run a tool without its write-ahead record.
    if (replay === undefined) throw new Error(`the idempotency key is held by ${begun.holder.id} (${begun.holder.status}) but neither replays nor refuses`);
    return replay;
  }
  ctx.journaled = true;
  return undefined;
}

/**
 * The one closing write of a call; the call answers only once it is committed
 * (SPEC section 5 step 10). A read-only call without an idempotency key is group
 * committed with the other records of this event-loop turn (one transaction for
 * them all); every other record is written on its own (a key's record is what a
 * repeat on any host replays).
 */
export function closeJournal(journal: CallJournal, ctx: CallContext, end: CallEnd): Promise<void> {
  const finish = toFinish(ctx, end);
  if (ctx.journaled) return journal.finish(ctx.callId, finish);
  if (ctx.idempotencyKey === null && ctx.view?.manifest.sideEffect === 'read_only') return journal.recordSoon(ctx.toStart(), finish);
  return journal.record(ctx.toStart(), finish);
}

/**
 * The answer of a call whose closing record could not be written: its result is
 * withheld (no answer without its record), as `internal` with the reason the gap
 * record will carry. The tool may have run: a non-read-only call's write-ahead
 * record says so, and becomes `interrupted` if its end is never written.
 */
export function unrecordedCallError(error: unknown): HostError {
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
