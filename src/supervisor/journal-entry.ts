// The journal side of a call (SPEC section 7): the write-ahead `started`
// record for every non-read-only call before it runs, and exactly one closing
// write per call from the supervisor's `finally` — finish() for a journaled
// call, record() for everything else (refusals, read-only calls, replays).
import type { CallFinish, CallStart, IdempotencyRecord } from '../audit/call-record.js';
import { ERRORS, type HostError } from '../errors.js';
import type { CallContext } from './call-context.js';

/** What the supervisor needs of the journal (src/audit/journal.ts implements it). */
export interface CallJournal {
  begin(start: CallStart): void;
  finish(id: string, finish: CallFinish): void;
  record(start: CallStart, finish: CallFinish): void;
  findByIdempotencyKey(tool: string, key: string): IdempotencyRecord | undefined;
}

/** How a call ended, as the journal needs it. */
export type CallEnd =
  | { readonly kind: 'result'; readonly payloadHash: string | null; readonly payloadBytes: number | null; readonly replay: string | null }
  | { readonly kind: 'input_required' }
  | { readonly kind: 'error'; readonly error: HostError };

/** Writes the `started` record before a non-read-only call runs; read-only calls are recorded at the end. */
export function beginJournal(journal: CallJournal, ctx: CallContext): void {
  if (ctx.view?.manifest.sideEffect === 'read_only') return;
  journal.begin(ctx.toStart());
  ctx.journaled = true;
}

/** The one closing write of a call. */
export function closeJournal(journal: CallJournal, ctx: CallContext, end: CallEnd): void {
  const finish = toFinish(ctx, end);
  if (ctx.journaled) journal.finish(ctx.callId, finish);
  else journal.record(ctx.toStart(), finish);
}

function toFinish(ctx: CallContext, end: CallEnd): CallFinish {
  return { ...finishOf(ctx, end), egressAdmitted: ctx.egress.admitted, egressRefused: ctx.egress.refused };
}

function finishOf(ctx: CallContext, end: CallEnd): CallFinish {
  const endedAt = Date.now();
  switch (end.kind) {
    case 'result':
      return { status: 'completed', errorCode: null, resultHash: end.payloadHash, resultBytes: end.payloadBytes, replay: ctx.idempotencyKey === null ? null : end.replay, endedAt };
    case 'input_required':
      // Refused for this round: the client's retry with the signed state is a new call and a new record.
      return { status: 'denied', errorCode: 'approval_required', resultHash: null, resultBytes: null, replay: null, endedAt };
    case 'error':
      return { status: ERRORS[end.error.code].auditStatus, errorCode: end.error.code, resultHash: null, resultBytes: null, replay: null, endedAt };
  }
}
