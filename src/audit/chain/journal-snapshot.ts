// Everything `audit verify` reads of a journal, from either store or from an
// export file: the chains' entries in order, the chains' rows, and the
// queryable state (calls and approvals) the entries must account for.
import type { ApprovalRecord } from '../approval-record.js';
import type { ChainEntry } from './chain-entry.js';
import type { ChainedCall } from './chain-records.js';

/** A chain's row: closedAt is set with its final checkpoint. */
export interface ChainRow {
  readonly id: string;
  readonly role: string;
  readonly openedAt: number;
  readonly closedAt: number | null;
}

export interface JournalSnapshot {
  /** Every entry, ordered by chain, then seq. */
  readonly entries: readonly ChainEntry[];
  /** The chains' rows; undefined for an export (it holds entries only). */
  readonly chains?: readonly ChainRow[];
  /** The calls table as chained records; undefined for an export. */
  readonly calls?: readonly ChainedCall[];
  /** The approvals table; undefined for an export. */
  readonly approvals?: readonly ApprovalRecord[];
  /** Records started before this (ms) predate the chain; null when unknown. */
  readonly chainedSince: number | null;
}
