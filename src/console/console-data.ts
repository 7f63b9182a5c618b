// What the console reads besides the journal, as small interfaces the command
// that starts it fills in: the tools with the policy's decision (from the host
// configuration), the chain's verify status, and the audit search.
import type { CallRecord } from '../audit/call-record.js';

/** One tool as the tools page lists it. */
export interface ConsoleTool {
  readonly name: string;
  /** The manifest file (a server's, for its tools). */
  readonly file: string;
  readonly description: string;
  /** null: unclassified. */
  readonly sideEffect: string | null;
  /** `isolate`, `worker`, `process`, `process+namespace`. */
  readonly sandbox: string;
  readonly trust: 'first_party' | 'community';
  readonly listed: boolean;
  readonly decision: 'allow' | 'ask' | 'deny';
  readonly code: string | null;
  readonly rule: string | null;
  readonly reason: string | null;
  /** The pinned definition digest (`toolhost lock`), when the tool carries one. */
  readonly pin: string | null;
  /** Paths the tool writes (manifest `effects.writes`). */
  readonly writes: readonly string[];
}

/** The explain view of one tool. */
export interface ConsoleToolDetail extends ConsoleTool {
  readonly limits: { readonly timeoutMs: number; readonly maxResultBytes: number; readonly memoryMb: number };
  readonly allowedModes: readonly string[];
  readonly checks: readonly { readonly key: string; readonly outcome: string; readonly rule: string | null; readonly text: string }[];
  readonly keys: readonly { readonly key: string; readonly value: unknown; readonly layer: string; readonly rule: string }[];
  /** A tool of an upstream server: the server and the tool's own name. */
  readonly upstream: { readonly server: string; readonly tool: string } | null;
}

export interface ConsoleTools {
  list(): readonly ConsoleTool[];
  detail(name: string): ConsoleToolDetail | undefined;
  /** Problems loading manifests or policies (`file:line:col: reason`), or why no tools are known. */
  problems(): readonly string[];
}

/** The chain's verify status: whole, or the first break. */
export type ChainVerdict = { readonly ok: true } | { readonly ok: false; readonly recordId: string; readonly kind: string };

/** Verifies the journal's hash chain (SPEC section 7.3). */
export interface ChainVerifier {
  verify(): Promise<ChainVerdict>;
}

/** The filters of `toolhost audit` (SPEC section 8). */
export interface AuditFilter {
  readonly tool?: string;
  readonly status?: string;
  readonly principal?: string;
  readonly decision?: string;
  readonly code?: string;
  readonly rule?: string;
  /** ms since the epoch */
  readonly since?: number;
  readonly until?: number;
  readonly limit: number;
}

export interface AuditSearchResult {
  readonly records: readonly CallRecord[];
}

export interface AuditSearch {
  search(filter: AuditFilter): Promise<AuditSearchResult>;
}
