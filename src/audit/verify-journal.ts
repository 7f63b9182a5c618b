// `toolhost audit verify` (SPEC section 7.3) as a plain function over the
// Journal interface, or over an export file: every chain is walked from its
// first entry (each entry's hash recomputed, each `prev` matched, each
// checkpoint's signature checked against the key the chain opened with), then
// the calls and approvals tables are checked against the chains (each row must
// be the latest chained fact about it, and each chained record must still have
// its row). The report names the first break; the console and the CLI print it.
import type { ApprovalRecord } from './approval-record.js';
import { canonicalJson } from '../config/canonical-json.js';
import { CHAIN_ENTRY_KINDS, checkpointSignedText, entryHash, type ChainEntry, type CheckpointRecord, type GapRecord, type OpenRecord } from './chain/chain-entry.js';
import { verifyChainSignature } from './chain/chain-key.js';
import type { ChainedCall } from './chain/chain-records.js';
import type { JournalSnapshot } from './chain/journal-snapshot.js';
import type { Journal } from './journal.js';

/** What a break is. */
type ChainBreakKind =
  /** An entry's content no longer matches its hash, or a row differs from its latest chained fact. */
  | 'edited'
  /** Entries are missing from a chain, or a chained record has no row. */
  | 'deleted'
  /** Entries are in another order than their hashes link them. */
  | 'reordered'
  /** A chain that was closed no longer ends with its final checkpoint: its tail was cut. */
  | 'truncated'
  /** A checkpoint whose signature does not verify with the chain's key, or that was signed by another key. */
  | 'checkpoint_invalid'
  /** A chain opened with a key that is not among the keys the auditor trusts. */
  | 'untrusted_key'
  /** A row (or an entry after a final checkpoint) that no chain accounts for. */
  | 'inserted'
  /** An entry that cannot be read (unknown kind or version, bad JSON). */
  | 'malformed';

interface ChainBreak {
  readonly kind: ChainBreakKind;
  /** The chain it was found in; null for a table row no chain accounts for. */
  readonly chain: string | null;
  /** The entry's position in its chain; null for a table row. */
  readonly seq: number | null;
  /** The call or approval id (or gap, checkpoint, chain id) the break is about; null when unknown. */
  readonly recordId: string | null;
  /** One sentence for people. */
  readonly detail: string;
}

interface ChainSummary {
  readonly id: string;
  readonly role: string | null;
  readonly keyId: string | null;
  readonly entries: number;
  readonly checkpoints: number;
  /** True when the chain ends with its final checkpoint (its writer stopped cleanly). */
  readonly closed: boolean;
  /** Entries after the last checkpoint: not yet signed (a writer still running, or one that died). */
  readonly unsignedEntries: number;
}

export interface VerifyReport {
  readonly ok: boolean;
  /** The first break found (chains in the order they opened, then the tables); null when ok. */
  readonly firstBreak: ChainBreak | null;
  /** Every break found, at most MAX_REPORTED_BREAKS. */
  readonly breaks: readonly ChainBreak[];
  readonly chains: readonly ChainSummary[];
  readonly counts: {
    readonly entries: number;
    readonly calls: number;
    readonly approvals: number;
    /** Gap entries, and the records they say were lost. */
    readonly gaps: number;
    readonly lostRecords: number;
    /** Rows older than the chain (written before this toolhost chained its journal). */
    readonly predatingChain: number;
  };
  /** What verifies but an auditor should know: unsigned tails, records that predate the chain. */
  readonly warnings: readonly string[];
}

interface VerifyOptions {
  /** Base64url Ed25519 public keys (or key ids) the auditor trusts; absent: any key a chain opened with. */
  readonly trustedKeys?: readonly string[];
}

/** At most this many breaks are listed (the first is what matters). */
const MAX_REPORTED_BREAKS = 100;

/** Verifies a journal's chains and tables (SQLite or PostgreSQL, through the Journal interface). */
export async function verifyJournal(journal: Pick<Journal, 'readSnapshot'>, options: VerifyOptions = {}): Promise<VerifyReport> {
  return verifySnapshot(await journal.readSnapshot(), options);
}

/** Verifies what was read of a journal or an export (src/audit/audit-export.ts reads one back). */
export function verifySnapshot(snapshot: JournalSnapshot, options: VerifyOptions = {}): VerifyReport {
  const breaks: ChainBreak[] = [];
  const report = (found: ChainBreak): void => {
    if (breaks.length < MAX_REPORTED_BREAKS) breaks.push(found);
  };
  const latest = new Map<string, Fact>();
  const chains: ChainSummary[] = [];
  let gaps = 0;
  let lostRecords = 0;
  const warnings: string[] = [];
  const closedChains = new Map((snapshot.chains ?? []).map((chain) => [chain.id, chain]));
  const trusted = options.trustedKeys === undefined ? undefined : new Set(options.trustedKeys);

  for (const entries of chainsInOrder(snapshot.entries)) {
    const walked = walkChain(entries, report, trusted);
    gaps += walked.gaps;
    lostRecords += walked.lostRecords;
    for (const fact of walked.facts) {
      const known = latest.get(fact.key);
      if (known !== undefined && known.rev === fact.rev) {
        report({ kind: 'edited', chain: fact.chain, seq: fact.seq, recordId: fact.ref, detail: `Two chained facts claim revision ${fact.rev} of ${fact.ref}.` });
      }
      if (known === undefined || known.rev < fact.rev) latest.set(fact.key, fact);
    }
    const row = closedChains.get(walked.summary.id);
    if (row?.closedAt !== null && row?.closedAt !== undefined && !walked.summary.closed) {
      report({
        kind: 'truncated',
        chain: walked.summary.id,
        seq: entries.length,
        recordId: entries[entries.length - 1]?.ref ?? null,
        detail: `Chain ${walked.summary.id} was closed but no longer ends with its final checkpoint: its last entries were cut (it ends at seq ${entries[entries.length - 1]?.seq ?? 0}).`,
      });
    } else if (!walked.summary.closed && walked.summary.unsignedEntries > 0) {
      warnings.push(
        `Chain ${walked.summary.id}: the last ${walked.summary.unsignedEntries} entries are not covered by a checkpoint (its writer is running, or stopped without closing the journal).`,
      );
    }
    chains.push(walked.summary);
  }
  const seen = new Set(chains.map((chain) => chain.id));
  for (const row of snapshot.chains ?? []) {
    if (!seen.has(row.id)) report({ kind: 'deleted', chain: row.id, seq: null, recordId: row.id, detail: `Every entry of chain ${row.id} is gone.` });
  }

  let predatingChain = 0;
  const since = snapshot.chainedSince ?? Number.NEGATIVE_INFINITY;
  const checkRows = <Row extends { id: string }>(
    kind: 'call' | 'approval',
    rows: readonly Row[] | undefined,
    chained: (row: Row) => object,
    startedAt: (row: Row) => number,
  ): void => {
    if (rows === undefined) return;
    const present = new Set<string>();
    for (const row of rows) {
      present.add(row.id);
      const fact = latest.get(`${kind}:${row.id}`);
      if (fact === undefined) {
        if (startedAt(row) < since) predatingChain += 1;
        else report({ kind: 'inserted', chain: null, seq: null, recordId: row.id, detail: `The ${kind} record ${row.id} is in the table but in no chain.` });
        continue;
      }
      if (canonicalJson(chained(row)) !== fact.record) {
        report({
          kind: 'edited',
          chain: fact.chain,
          seq: fact.seq,
          recordId: row.id,
          detail: `The ${kind} record ${row.id} differs from its latest chained fact (chain ${fact.chain}, seq ${fact.seq}): ${differingFields(chained(row), fact.record)}.`,
        });
      }
    }
    for (const fact of latest.values()) {
      if (fact.kind === kind && !present.has(fact.ref))
        report({
          kind: 'deleted',
          chain: fact.chain,
          seq: fact.seq,
          recordId: fact.ref,
          detail: `The ${kind} record ${fact.ref} is chained (chain ${fact.chain}, seq ${fact.seq}) but its row is gone.`,
        });
    }
  };
  checkRows<ChainedCall>(
    'call',
    snapshot.calls,
    (row) => row,
    (row) => row.startedAt,
  );
  checkRows<ApprovalRecord>(
    'approval',
    snapshot.approvals,
    (row) => ({ ...row }),
    (row) => row.createdAt,
  );
  if (predatingChain > 0) warnings.push(`${predatingChain} records predate the chain (written before this journal was chained) and cannot be verified.`);

  return {
    ok: breaks.length === 0,
    firstBreak: breaks[0] ?? null,
    breaks,
    chains,
    counts: {
      entries: snapshot.entries.length,
      calls: snapshot.calls?.length ?? [...latest.values()].filter((fact) => fact.kind === 'call').length,
      approvals: snapshot.approvals?.length ?? [...latest.values()].filter((fact) => fact.kind === 'approval').length,
      gaps,
      lostRecords,
      predatingChain,
    },
    warnings,
  };
}

interface Fact {
  readonly key: string;
  readonly kind: 'call' | 'approval';
  readonly ref: string;
  readonly rev: number;
  readonly chain: string;
  readonly seq: number;
  readonly record: string;
}

// Entries grouped by chain, chains in the order they opened (their first entry's time, then id).
function chainsInOrder(entries: readonly ChainEntry[]): ChainEntry[][] {
  const byChain = new Map<string, ChainEntry[]>();
  for (const entry of entries) {
    let list = byChain.get(entry.chain);
    if (list === undefined) byChain.set(entry.chain, (list = []));
    list.push(entry);
  }
  for (const list of byChain.values()) list.sort((a, b) => a.seq - b.seq);
  return [...byChain.values()].sort((a, b) => (a[0]?.at ?? 0) - (b[0]?.at ?? 0) || (a[0]?.chain ?? '').localeCompare(b[0]?.chain ?? ''));
}

function walkChain(entries: readonly ChainEntry[], report: (found: ChainBreak) => void, trusted: ReadonlySet<string> | undefined) {
  const chain = entries[0]?.chain ?? '';
  const positionOf = new Map(entries.map((entry, index) => [entry.hash, index]));
  const facts: Fact[] = [];
  let publicKey: string | null = null;
  let keyId: string | null = null;
  let role: string | null = null;
  let checkpoints = 0;
  let lastCheckpointAt = 0;
  let closedAt: number | undefined;
  let gaps = 0;
  let lostRecords = 0;
  let broken = false;
  const fail = (found: ChainBreak): void => {
    if (!broken) report(found);
    broken = true;
  };
  let prevHash: string | null = null;
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index] as ChainEntry;
    const at = { chain, seq: entry.seq, recordId: entry.ref };
    const expectedSeq = index + 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(entry.record);
    } catch {
      fail({ kind: 'malformed', ...at, detail: `Entry ${entry.seq} of chain ${chain} holds a record that is not JSON.` });
      prevHash = entry.hash;
      continue;
    }
    if (!CHAIN_ENTRY_KINDS.includes(entry.kind)) fail({ kind: 'malformed', ...at, detail: `Entry ${entry.seq} of chain ${chain} has an unknown kind "${String(entry.kind)}".` });
    if (entryHash(entry) !== entry.hash || canonicalJson(parsed) !== entry.record) {
      fail({ kind: 'edited', ...at, detail: `Entry ${entry.seq} of chain ${chain} (${entry.kind} ${entry.ref}) no longer matches its hash.` });
    } else if (entry.prev !== prevHash) {
      const linked = entry.prev === null ? undefined : positionOf.get(entry.prev);
      if (entry.seq !== expectedSeq || linked === undefined) {
        const missing = entry.seq > expectedSeq ? `entries ${expectedSeq}..${entry.seq - 1} are missing` : `the entry it follows is missing`;
        fail({ kind: 'deleted', ...at, detail: `Chain ${chain} is broken before entry ${entry.seq} (${entry.kind} ${entry.ref}): ${missing}.` });
      } else {
        fail({
          kind: 'reordered',
          ...at,
          detail: `Entry ${entry.seq} of chain ${chain} (${entry.kind} ${entry.ref}) follows entry ${linked + 1} by its hash, not entry ${entry.seq - 1}: entries were moved.`,
        });
      }
    } else if (entry.seq !== expectedSeq) {
      fail({ kind: 'deleted', ...at, detail: `Chain ${chain} numbers entry ${entry.seq} where ${expectedSeq} belongs.` });
    }
    if (closedAt !== undefined) fail({ kind: 'inserted', ...at, detail: `Entry ${entry.seq} of chain ${chain} comes after the chain's final checkpoint.` });
    prevHash = entry.hash;
    const record = parsed as Record<string, unknown>;
    switch (entry.kind) {
      case 'open': {
        const open = record as unknown as OpenRecord;
        if (index !== 0) fail({ kind: 'malformed', ...at, detail: `Chain ${chain} opens a second time at entry ${entry.seq}.` });
        publicKey = open.publicKey;
        keyId = open.keyId;
        role = open.role;
        if (trusted !== undefined && !trusted.has(open.publicKey) && !trusted.has(open.keyId)) {
          fail({ kind: 'untrusted_key', ...at, detail: `Chain ${chain} is signed with key ${open.keyId}, which is not among the trusted keys.` });
        }
        break;
      }
      case 'checkpoint': {
        const checkpoint = record as unknown as CheckpointRecord;
        const covered = entries[index - 1];
        const signedBy = checkpoint.keyId === keyId ? 'the chain key' : `another key (${String(checkpoint.keyId)})`;
        const signatureOk =
          publicKey !== null &&
          checkpoint.keyId === keyId &&
          verifyChainSignature(
            publicKey,
            checkpointSignedText(chain, { seq: checkpoint.seq, hash: checkpoint.hash, final: checkpoint.final, keyId: checkpoint.keyId }),
            checkpoint.signature,
          );
        if (!signatureOk) {
          fail({
            kind: 'checkpoint_invalid',
            ...at,
            detail: `The checkpoint at entry ${entry.seq} of chain ${chain} does not verify with the chain's key ${keyId ?? '(none)'}: it was signed by ${signedBy}, or altered.`,
          });
        } else if (covered === undefined || checkpoint.seq !== covered.seq || checkpoint.hash !== covered.hash) {
          fail({
            kind: 'checkpoint_invalid',
            ...at,
            detail: `The checkpoint at entry ${entry.seq} of chain ${chain} signs entry ${checkpoint.seq}, which is not the entry before it.`,
          });
        }
        checkpoints += 1;
        lastCheckpointAt = index + 1;
        if (checkpoint.final === true) closedAt = index;
        break;
      }
      case 'gap': {
        const gap = record as unknown as GapRecord;
        gaps += 1;
        lostRecords += typeof gap.count === 'number' ? gap.count : 0;
        break;
      }
      case 'call':
      case 'approval':
        facts.push({ key: `${entry.kind}:${entry.ref}`, kind: entry.kind, ref: entry.ref, rev: entry.rev, chain, seq: entry.seq, record: entry.record });
        break;
    }
  }
  const summary: ChainSummary = {
    id: chain,
    role,
    keyId,
    entries: entries.length,
    checkpoints,
    closed: closedAt !== undefined && closedAt === entries.length - 1,
    unsignedEntries: entries.length - lastCheckpointAt,
  };
  return { summary, facts, gaps, lostRecords };
}

// Which fields differ, for the detail line (names only: values may be long).
function differingFields(row: object, chainedText: string): string {
  let chained: Record<string, unknown>;
  try {
    chained = JSON.parse(chainedText) as Record<string, unknown>;
  } catch {
    return 'the chained record is not JSON';
  }
  const current = JSON.parse(canonicalJson(row)) as Record<string, unknown>;
  const names = [...new Set([...Object.keys(current), ...Object.keys(chained)])].filter((name) => JSON.stringify(current[name]) !== JSON.stringify(chained[name]));
  return names.length === 0 ? 'its encoding' : `${names.join(', ')} changed`;
}
