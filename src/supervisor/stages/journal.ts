// The journal stage (SPEC section 5 step 7, section 7): the write-ahead
// `started` record for every non-read-only call before it runs. The closing
// write of every call is the finish stage's (finish.ts).
import type { Journal } from '../../audit/journal.js';
import type { CallContext } from '../call-context.js';
import { resolveKeyHolder, type ReplayedResult } from './idempotency.js';

/** What the supervisor needs of the journal (both stores behind src/audit/journal.ts implement it). */
export type CallJournal = Pick<Journal, 'begin' | 'finish' | 'record' | 'recordSoon' | 'findByIdempotencyKey' | 'createApproval' | 'spendApproval' | 'takeRate'>;

/** What the write-ahead step did: wrote the `started` record, or found the key held by a call whose result this one replays. */
type WriteAhead = { readonly kind: 'begun' } | { readonly kind: 'held'; readonly replay: ReplayedResult };

/**
 * Writes the `started` record before a non-read-only call runs; read-only calls
 * are recorded at the end. The write claims the call's idempotency key on every
 * host of the journal: when another call won it meanwhile, nothing is written and
 * this returns that call's replay, or throws interrupted_side_effect (state
 * in_progress while it runs). A failed write throws: the tool does not run.
 */
export function beginJournal(journal: CallJournal, ctx: CallContext): Promise<WriteAhead> | undefined {
  // A read-only call has no write-ahead record: nothing to wait for (undefined, at once, no promise).
  if (ctx.view?.manifest.sideEffect === 'read_only') return undefined;
  return writeAhead(journal, ctx);
}

async function writeAhead(journal: CallJournal, ctx: CallContext): Promise<WriteAhead> {
  const begun = await journal.begin(ctx.toStart());
  if (begun.kind === 'held') {
    const replay = resolveKeyHolder(begun.holder, ctx.toolName, ctx.argsHash);
    // A held key always replays or refuses; never run a tool without its write-ahead record.
    if (replay === undefined) throw new Error(`the idempotency key is held by ${begun.holder.id} (${begun.holder.status}) but neither replays nor refuses`);
    return { kind: 'held', replay };
  }
  return { kind: 'begun' };
}
