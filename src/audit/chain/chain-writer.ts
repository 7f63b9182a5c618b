// The writing end of one chain: its head (last seq and hash), when the next
// checkpoint is due, and the count of records it could not write. A store
// prepares the entries of a write inside the write's transaction, from the
// facts the write produced, and tells the writer whether the transaction
// committed: the head moves only then, so a write that failed leaves no hole
// (it is counted, and the next write that succeeds leads with a `gap` entry).
// Writes of one chain are serialised by its store; this holds no lock.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../../config/canonical-json.js';
import type { ChainSigner } from './chain-key.js';
import { checkpointSignedText, entryHash, type ChainEntry, type ChainEntryKind, type CheckpointRecord, type GapRecord, type OpenRecord } from './chain-entry.js';

/** Default number of entries between two checkpoints. */
const DEFAULT_CHECKPOINT_EVERY = 100;
/** The environment variable that sets it (tests make it small). */
const CHECKPOINT_EVERY_ENV = 'TOOLHOST_JOURNAL_CHECKPOINT_EVERY';

/** A fact to chain: what a write changed, as the record then stands. */
export interface ChainFact {
  readonly kind: Extract<ChainEntryKind, 'call' | 'approval'>;
  readonly ref: string;
  readonly rev: number;
  /** Plain data; canonicalised here unless `text` is given. */
  readonly record: object;
  /** The record's RFC 8785 text, when the caller has it already (a call record: chain-records.ts). */
  readonly text?: string;
}

/** Entries prepared for one write; commit() or fail() them once the transaction is over. */
export interface PreparedEntries {
  readonly entries: readonly ChainEntry[];
  /** True when the last entry is the chain's final checkpoint. */
  readonly final: boolean;
}

interface ChainWriterOptions {
  readonly role: OpenRecord['role'];
  /** The host row this chain writes for (read when the chain opens); null for an operator command. */
  readonly hostId: () => string | null;
  /** The signing key, loaded the first time the chain writes (a reader that never writes never needs one). */
  readonly signer: () => ChainSigner;
  readonly checkpointEvery?: number;
  readonly now?: () => number;
  readonly chainId?: string;
}

export class ChainWriter {
  readonly chainId: string;
  readonly #options: ChainWriterOptions;
  readonly #checkpointEvery: number;
  readonly #now: () => number;
  #signer: ChainSigner | undefined;
  #seq = 0;
  #hash: string | null = null;
  #sinceCheckpoint = 0;
  #lost: { count: number; firstAt: number; lastAt: number; reason: string } | undefined;
  #pending: { seq: number; hash: string | null; sinceCheckpoint: number; lost: boolean } | undefined;
  #final = false;

  constructor(options: ChainWriterOptions) {
    this.#options = options;
    this.chainId = options.chainId ?? randomUUID();
    this.#checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    if (!Number.isInteger(this.#checkpointEvery) || this.#checkpointEvery < 1)
      throw new RangeError(`checkpointEvery must be a positive whole number, got ${this.#checkpointEvery}`);
    this.#now = options.now ?? Date.now;
  }

  /** Entries written so far (the head's seq). */
  get seq(): number {
    return this.#seq;
  }

  /** True once the chain wrote its final checkpoint. */
  get isFinal(): boolean {
    return this.#final;
  }

  /** True when nothing of this chain was written yet (its `open` entry comes first). */
  get isNew(): boolean {
    return this.#seq === 0;
  }

  /** True when a write of records failed and its gap is not yet written. */
  get hasGap(): boolean {
    return this.#lost !== undefined;
  }

  /**
   * The entries that chain `facts` after the head: the chain's opening when it is
   * new, a gap when records were lost, the facts, and a checkpoint when one is
   * due (or `final`). Nothing changes until commit().
   */
  prepare(facts: readonly ChainFact[], options: { readonly final?: boolean; readonly open?: boolean } = {}): PreparedEntries {
    if (this.#final) throw new Error('this chain is closed: its final checkpoint is written');
    // A chain opens with its first fact (or when its host registers): a reader that writes nothing leaves no chain.
    if (this.#seq === 0 && facts.length === 0 && this.#lost === undefined && options.open !== true) {
      this.#pending = undefined;
      return { entries: [], final: false };
    }
    const entries: ChainEntry[] = [];
    let seq = this.#seq;
    let hash = this.#hash;
    let since = this.#sinceCheckpoint;
    const at = this.#now();
    const push = (kind: ChainEntryKind, ref: string, rev: number, record: string): void => {
      const unhashed = { chain: this.chainId, prev: hash, kind, ref, rev, at, record };
      seq += 1;
      hash = entryHash(unhashed);
      entries.push({ ...unhashed, seq, hash });
      since += 1;
    };
    if (seq === 0) push('open', this.chainId, 0, canonicalJson(this.#openRecord()));
    const lost = this.#lost;
    if (lost !== undefined) push('gap', randomUUID(), 0, canonicalJson({ ...lost } satisfies GapRecord));
    for (const fact of facts) push(fact.kind, fact.ref, fact.rev, fact.text ?? canonicalJson(fact.record));
    const final = options.final === true;
    if (final || since >= this.#checkpointEvery) {
      push('checkpoint', `${this.chainId}#${seq}`, 0, canonicalJson(this.#checkpoint(seq, hash as string, final)));
      since = 0;
    }
    this.#pending = { seq, hash, sinceCheckpoint: since, lost: lost !== undefined };
    return { entries, final };
  }

  /** The transaction that wrote the prepared entries committed: the head moves to them. */
  commit(prepared: PreparedEntries): void {
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    this.#seq = pending.seq;
    this.#hash = pending.hash;
    this.#sinceCheckpoint = pending.sinceCheckpoint;
    if (pending.lost) this.#lost = undefined;
    if (prepared.final) this.#final = true;
  }

  /**
   * The write failed: its entries were not written. `records` of the write's call or
   * approval records are lost; the next write leads with a gap entry that counts them.
   */
  fail(records: number, reason: string): void {
    this.#pending = undefined;
    if (records <= 0) return;
    const now = this.#now();
    const lost = this.#lost;
    this.#lost = lost === undefined ? { count: records, firstAt: now, lastAt: now, reason } : { ...lost, count: lost.count + records, lastAt: now };
  }

  #openRecord(): OpenRecord {
    const signer = this.#signerNow();
    return {
      role: this.#options.role,
      algorithm: 'Ed25519',
      publicKey: signer.publicKey,
      keyId: signer.keyId,
      hostId: this.#options.hostId(),
      machine: hostname(),
      pid: process.pid,
    };
  }

  #checkpoint(seq: number, hash: string, final: boolean): CheckpointRecord {
    const signer = this.#signerNow();
    const unsigned = { seq, hash, final, keyId: signer.keyId };
    return { ...unsigned, signature: signer.sign(checkpointSignedText(this.chainId, unsigned)) };
  }

  #signerNow(): ChainSigner {
    this.#signer ??= this.#options.signer();
    return this.#signer;
  }
}

/** The checkpoint interval in force: TOOLHOST_JOURNAL_CHECKPOINT_EVERY, else the default. */
export function checkpointEveryFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[CHECKPOINT_EVERY_ENV];
  if (text === undefined || text === '') return DEFAULT_CHECKPOINT_EVERY;
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1) throw new RangeError(`${CHECKPOINT_EVERY_ENV} must be a whole number of entries, at least 1; got "${text}"`);
  return Number(text);
}
