// One entry of a host's chain (SPEC section 7.3): a fact (a call record as it
// stands after a write, an approval, a gap, a checkpoint, the chain's opening
// with its public key) bound to the entry before it by that entry's hash.
// Status changes are facts of their own: a call's write-ahead `started`
// record is one entry (rev 0) and its completion another (rev 1), a
// reconciliation a third (rev 2), each holding the whole record as it then
// stood, so nothing chained is ever updated in place. The calls and approvals
// tables are the queryable state; `audit verify` checks that each of their rows
// is the latest chained fact about it.
import { sha256Hex } from '../hash.js';

/** Version of the hashed form; a verifier refuses versions it does not know. */
const CHAIN_FORMAT_VERSION = 1;

export type ChainEntryKind = 'open' | 'call' | 'approval' | 'gap' | 'checkpoint';

export const CHAIN_ENTRY_KINDS: readonly ChainEntryKind[] = ['open', 'call', 'approval', 'gap', 'checkpoint'];

/** An entry as stored and exported. */
export interface ChainEntry {
  /** The chain (one per host process, or per operator command that wrote). */
  readonly chain: string;
  /** 1-based position in its chain; not hashed: `prev` fixes the order, seq only indexes it. */
  readonly seq: number;
  /** Hash of the entry before it in this chain; null for the chain's first entry. */
  readonly prev: string | null;
  /** SHA-256 hex of the canonical form (entryHash). */
  readonly hash: string;
  readonly kind: ChainEntryKind;
  /** What the fact is about: a call or approval id, a gap's or checkpoint's own id, the chain id for `open`. */
  readonly ref: string;
  /** Revision of `ref`: 0 for its first fact, one more for each change (a call's finish is 1). */
  readonly rev: number;
  /** When the entry was made, ms since the epoch. */
  readonly at: number;
  /** The fact: RFC 8785 canonical JSON text of the record. */
  readonly record: string;
}

/** The hashed part of an entry. */
type UnhashedEntry = Omit<ChainEntry, 'hash' | 'seq'>;

/**
 * SHA-256 hex of the RFC 8785 form of {v, chain, prev, kind, ref, rev, at, record}.
 * The record is canonical text already, so the canonical object is spliced in
 * key order (at, chain, kind, prev, record, ref, rev, v) rather than parsed and
 * canonicalised again: the same bytes (test/unit/audit/chain/chain-entry.test.ts).
 */
export function entryHash(entry: UnhashedEntry): string {
  return sha256Hex(entryCanonicalText(entry));
}

/** The bytes entryHash covers. */
export function entryCanonicalText(entry: UnhashedEntry): string {
  return (
    `{"at":${entry.at},"chain":${JSON.stringify(entry.chain)},"kind":${JSON.stringify(entry.kind)},` +
    `"prev":${entry.prev === null ? 'null' : JSON.stringify(entry.prev)},"record":${entry.record},` +
    `"ref":${JSON.stringify(entry.ref)},"rev":${entry.rev},"v":${CHAIN_FORMAT_VERSION}}`
  );
}

/** The record of a chain's first entry: who writes it and the key its checkpoints verify with. */
export interface OpenRecord {
  readonly role: 'host' | 'operator';
  readonly algorithm: 'Ed25519';
  /** Raw 32-byte Ed25519 public key, base64url (the JWK `x`). */
  readonly publicKey: string;
  readonly keyId: string;
  readonly hostId: string | null;
  readonly machine: string;
  readonly pid: number;
}

/** The record of a checkpoint: a signature over the chain's state at entry `seq`. */
export interface CheckpointRecord {
  /** The last entry it covers, and that entry's hash. */
  readonly seq: number;
  readonly hash: string;
  /** True for the checkpoint a chain writes when it stops: nothing may follow it. */
  readonly final: boolean;
  readonly keyId: string;
  /** Ed25519 signature (base64url) over checkpointSignedText(chain, this record without the signature). */
  readonly signature: string;
}

/** The record of a gap: records this chain could not write (disk full, database away). */
export interface GapRecord {
  readonly count: number;
  readonly firstAt: number;
  readonly lastAt: number;
  /** `disk_full` or `journal_unavailable`. */
  readonly reason: string;
}

/** What a checkpoint's signature covers. */
export function checkpointSignedText(chain: string, checkpoint: Omit<CheckpointRecord, 'signature'>): string {
  return (
    `{"chain":${JSON.stringify(chain)},"final":${checkpoint.final},"hash":${JSON.stringify(checkpoint.hash)},` +
    `"keyId":${JSON.stringify(checkpoint.keyId)},"seq":${checkpoint.seq},"v":${CHAIN_FORMAT_VERSION}}`
  );
}

/** An entry as the values of a row of `chain_entries` (chain_id, seq, prev, hash, kind, ref, rev, at, record). */
export function entryRowValues(entry: ChainEntry): unknown[] {
  return [entry.chain, entry.seq, entry.prev, entry.hash, entry.kind, entry.ref, entry.rev, entry.at, entry.record];
}
