// The journal interface (SPEC section 7): what the supervisor and the CLI see
// of the store behind `--journal`. Two stores implement it: sqlite/ (embedded,
// the default) and postgres/ (a fleet of hosts shares one). Every method is
// async: PostgreSQL answers over the network, and a write that must land
// before a tool runs (the write-ahead record, the idempotency claim) is awaited.
import type { StoredArtifact } from './artifact-ref.js';
import type { ApprovalDecision, ApprovalRecord, DecisionExtras, NewApproval, SpendOutcome } from './approval-record.js';
import type { CallFilter, CallFinish, CallRecord, CallStart, IdempotencyRecord, Reconciliation } from './call-record.js';
import type { RateCount, RateOutcome } from './rate-store.js';
import type { JournalSnapshot } from './chain/journal-snapshot.js';

export * from './call-record.js';
export * from './approval-record.js';
export { JournalError, isJournalError, type JournalErrorCode } from './journal-error.js';

/**
 * What begin() did: `begun` (the `started` record is written), or `held` when
 * the call's idempotency key is already held by another call (in flight on
 * any host, completed, or interrupted): nothing was written, and `holder`
 * says what governs the key.
 */
export type BeginOutcome = { readonly kind: 'begun' } | { readonly kind: 'held'; readonly holder: IdempotencyRecord };

export interface Journal {
  /** Which store this is. */
  readonly kind: 'sqlite' | 'postgres';
  /** Where it lives, safe to print and log: never a password. */
  readonly location: string;
  /** This host's row; null for a reader (toolhost audit, reconcile, approvals). */
  readonly hostId: string | null;

  /**
   * Writes the `started` record; for a non-read-only call this happens before
   * the tool runs. With an idempotency key the record also claims the key,
   * atomically across every host of the store (see BeginOutcome).
   */
  begin(start: CallStart): Promise<BeginOutcome>;
  /** Closes a `started` record with its outcome. */
  finish(id: string, finish: CallFinish): Promise<void>;
  /** One-shot record for a call refused or answered without a write-ahead record. */
  record(start: CallStart, finish: CallFinish): Promise<void>;
  /**
   * The one-shot record of a read-only call without an idempotency key, group
   * committed: queued with the other records of this event-loop turn and committed
   * with them in one transaction (record-batch.ts). Resolves once committed, rejects
   * (JournalError) when the batch could not be written; the caller answers only then.
   * With `alone` (no other call is in flight, so no record would join its batch) the
   * batch is committed at once, without waiting for the end of the turn.
   * Throws at once when the journal is closed or a reader.
   */
  recordSoon(start: CallStart, finish: CallFinish, alone?: boolean): Promise<void>;
  /** Commits every queued recordSoon record; resolves once they are written (a failure is logged). */
  flush(): Promise<void>;
  /** Everything `audit verify` checks: the chains' entries, the chains, calls and approvals, in one snapshot. */
  readSnapshot(): Promise<JournalSnapshot>;
  /** The record that governs an idempotency key of a tool, or undefined when the key may run. */
  findByIdempotencyKey(tool: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** An operator's decision on an interrupted call; throws unknown_call or not_interrupted. */
  reconcile(id: string, action: Reconciliation): Promise<CallRecord>;
  /** Call records, newest first. */
  query(filter?: CallFilter): Promise<CallRecord[]>;
  /** One call by id. */
  get(id: string): Promise<CallRecord | undefined>;

  /** Stores bytes content-addressed (deduplicated); a repeat put extends the expiry. */
  putArtifact(bytes: Uint8Array, mimeType: string): Promise<StoredArtifact>;
  /** An artifact by hash or URI; undefined when malformed, unknown, expired or damaged (hash checked). */
  getArtifact(sha256OrUri: string): Promise<{ mimeType: string; bytes: Uint8Array } | undefined>;

  /** Journals a pending operator approval (SPEC section 7.2). */
  createApproval(approval: NewApproval): Promise<ApprovalRecord>;
  /** Approvals, newest first; `pendingOnly` lists those still waiting (and not expired at `now`, default the clock). */
  listApprovals(filter?: { readonly pendingOnly?: boolean; readonly now?: number }): Promise<ApprovalRecord[]>;
  /** One approval by id, in any state. */
  getApproval(id: string): Promise<ApprovalRecord | undefined>;
  /** An operator's decision (with a note and where it was given); throws unknown_approval, approval_expired or approval_decided. */
  decideApproval(id: string, decision: ApprovalDecision, by: string, extras?: DecisionExtras): Promise<ApprovalRecord>;
  /** Spends an approved approval for one call of that tool with those arguments (and definition), at most once, on any host. */
  spendApproval(id: string, tool: string, argsHash: string, callId: string, definitionDigest?: string): Promise<SpendOutcome>;

  /**
   * Counts one call of `principal` in each window (SPEC section 4.1, limits.rate), atomically
   * on every host of the store, or none when one is full (its index and the time until it ends).
   */
  takeRate(principal: string, windows: readonly RateCount[]): Promise<RateOutcome>;

  /** Commits queued records, ends this host's row (its still-started calls become interrupted), stops leases, closes. Idempotent. */
  close(): Promise<void>;
}
