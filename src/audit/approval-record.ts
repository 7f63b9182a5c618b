// Pending approvals by an operator (SPEC section 7.2): a call that needs an
// approval nobody can give in-band fails with approval_required and leaves one
// of these in the journal; `toolhost approve` decides it; the caller's repeat
// with `_meta["toolhost/approvalId"]` spends it, once.
import { JournalError } from './journal-error.js';

/** pending → approved | denied (operator); approved → spent (the one call it allowed). */
export type ApprovalState = 'pending' | 'approved' | 'denied' | 'spent';

export const APPROVAL_STATES: readonly ApprovalState[] = ['pending', 'approved', 'denied', 'spent'];

export type ApprovalDecision = 'approved' | 'denied';

/**
 * One path a call would write, as whoever approves it sees it (SPEC section 2
 * `effects`, section 5 step 6): computed by the approval stage, kept with a
 * pending approval as plain data.
 */
export interface ProjectedWrite {
  /** The argument that names the path. */
  readonly argument: string;
  /** The path as resolved from the tool's first workspace root; null when the argument is missing or not a string. */
  readonly path: string | null;
  /** Inside a root the tool may write, inside a read-only root, outside every root, or no path given. */
  readonly where: 'writable_root' | 'read_only_root' | 'outside_roots' | 'no_path';
  /** One line for people: "new file", "replaces a 312-byte text file (+2 -1 lines)", "binary file: no diff". */
  readonly summary: string;
  /** Unified diff of a text write against the file as it is now, redacted and bounded; null when there is none. */
  readonly diff: string | null;
}

/** What is journaled when an approval is asked for. Times are ms since the epoch. */
export interface NewApproval {
  id: string;
  tool: string;
  /** sha256 hex of the canonical JSON of the arguments the approval is for. */
  argsHash: string;
  /** The enforced side-effect class. */
  sideEffect: string | null;
  /** The rule that asked for the approval (`file:line key`). */
  rule: string | null;
  /** Who asked (the HTTP principal); null on stdio. */
  principal: string | null;
  sessionId: string;
  /** The call that was refused with approval_required. */
  callId: string;
  createdAt: number;
  /** After this the approval can be neither decided nor spent. */
  expiresAt: number;
  /**
   * SHA-256 of the tool's definition the approval was asked for (SPEC section 4.2): a call to a
   * tool whose definition has changed since cannot spend it. Absent on approvals that bind none.
   */
  definitionDigest?: string;
  /** The arguments, redacted and bounded (a JSON value; the hash names them exactly); null when not kept. */
  arguments: unknown;
  /** What the call would write (the tool's `effects`); null when the tool declares none. */
  effects: readonly ProjectedWrite[] | null;
}

/** What an operator adds to a decision besides approve or deny. */
export interface DecisionExtras {
  /** Why, in the operator's words (bounded by the caller). */
  readonly note?: string | null;
  /** Where the decision was given: `cli`, or `console (principal NAME)`. */
  readonly via?: string;
}

export interface ApprovalRecord extends NewApproval {
  /** The host that asked (its journal host id); null for approvals journaled before it was kept, or by a reader. */
  hostId: string | null;
  state: ApprovalState;
  /** The operator (`--as NAME`, else the OS user); null while pending. */
  decidedBy: string | null;
  decidedAt: number | null;
  /** The operator's note; null when none was given. */
  note: string | null;
  /** Where the decision was given (`cli`, `console (principal NAME)`); null while pending and for older records. */
  decidedVia: string | null;
  /** The call that spent it; null until then. */
  spentBy: string | null;
  spentAt: number | null;
}

/** Why an approval id did not let a call run; each is approval_denied (pending: approval_required). */
export type SpendRefusal = 'unknown' | 'pending' | 'denied' | 'expired' | 'spent' | 'other_arguments' | 'definition_changed';

export type SpendOutcome = { readonly ok: true; readonly approval: ApprovalRecord } | { readonly ok: false; readonly reason: SpendRefusal; readonly approval?: ApprovalRecord };

/** Why a spend failed, from the row as it stands (the atomic update did not match). */
export function spendRefusalOf(record: ApprovalRecord | undefined, tool: string, argsHash: string, now: number, definitionDigest?: string): SpendRefusal {
  if (record === undefined) return 'unknown';
  if (record.tool !== tool || record.argsHash !== argsHash) return 'other_arguments';
  if ((record.definitionDigest ?? null) !== (definitionDigest ?? null)) return 'definition_changed';
  if (record.state === 'spent') return 'spent';
  if (record.state === 'denied') return 'denied';
  if (record.expiresAt <= now) return 'expired';
  return record.state === 'pending' ? 'pending' : 'spent';
}

/** Column list matching ApprovalRow. */
export const APPROVAL_COLUMNS = `id, tool, args_hash, side_effect, rule, principal, session_id, call_id, created_at, expires_at,
  state, decided_by, decided_at, spent_by, spent_at, definition_digest, arguments, effects, host_id, note, decided_via`;

export interface ApprovalRow {
  id: string;
  tool: string;
  args_hash: string;
  side_effect: string | null;
  rule: string | null;
  principal: string | null;
  session_id: string;
  call_id: string;
  created_at: number | string;
  expires_at: number | string;
  state: ApprovalState;
  decided_by: string | null;
  decided_at: number | string | null;
  spent_by: string | null;
  spent_at: number | string | null;
  definition_digest: string | null;
  /** JSON text */
  arguments: string | null;
  /** JSON text */
  effects: string | null;
  host_id: string | null;
  note: string | null;
  decided_via: string | null;
}

/** The new approval's JSON columns, as stored. */
export function approvalJsonColumns(approval: NewApproval): { arguments: string | null; effects: string | null } {
  return {
    arguments: approval.arguments === null || approval.arguments === undefined ? null : JSON.stringify(approval.arguments),
    effects: approval.effects === null || approval.effects.length === 0 ? null : JSON.stringify(approval.effects),
  };
}

/** Maps a row (SQLite integers or PostgreSQL bigint strings) to an ApprovalRecord. */
export function toApprovalRecord(row: ApprovalRow): ApprovalRecord {
  return {
    id: row.id,
    tool: row.tool,
    argsHash: row.args_hash,
    sideEffect: row.side_effect,
    rule: row.rule,
    principal: row.principal,
    sessionId: row.session_id,
    callId: row.call_id,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    state: row.state,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at === null ? null : Number(row.decided_at),
    spentBy: row.spent_by,
    spentAt: row.spent_at === null ? null : Number(row.spent_at),
    ...(row.definition_digest !== null ? { definitionDigest: row.definition_digest } : {}),
    arguments: parseJsonColumn(row.arguments),
    effects: (parseJsonColumn(row.effects) as ProjectedWrite[] | null) ?? null,
    hostId: row.host_id,
    note: row.note,
    decidedVia: row.decided_via,
  };
}

// Written by toolhost itself; a damaged value reads as absent rather than failing the listing.
function parseJsonColumn(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** Why a decision on an approval was refused . */
export function decideRefusal(id: string, record: ApprovalRecord | undefined, now: number): JournalError {
  if (record === undefined) return new JournalError('unknown_approval', `No approval ${id} in the journal.`, { id });
  if (record.state === 'pending' && record.expiresAt <= now) {
    return new JournalError('approval_expired', `Approval ${id} expired; the caller must ask again.`, { id, expiresAt: record.expiresAt });
  }
  return new JournalError('approval_decided', `Approval ${id} is already ${record.state}.`, { id, state: record.state });
}
