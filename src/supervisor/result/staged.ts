// What every reader of a result hands back, and what it is given: the staged
// result the caller and the journal see, the options of shaping, and the
// artifact store a spill goes to.
import type { Redactor } from '../redact.js';
import type { ContentBlock } from '../types.js';

/** A successful call's result, as the caller will see it, and what the journal records of it. */
export interface StagedResult {
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly meta?: Readonly<Record<string, unknown>>;
  /** What the journal hashes: the payload the budget was applied to (redacted). */
  readonly payload: string;
  readonly payloadBytes: number;
}

/** Where spilled blocks go; ArtifactStore from src/audit implements it. */
export interface ArtifactSink {
  put(bytes: Uint8Array, mimeType: string): { sha256: string; uri: string; size: number } | Promise<{ sha256: string; uri: string; size: number }>;
}

export interface ShapeOptions {
  readonly tool: string;
  readonly redact: Redactor;
  /** The inline budget (the policy's `maxResultBytes`): what does not fit is spilled, not refused. */
  readonly inlineBudgetBytes: number;
  readonly artifacts: ArtifactSink;
  /** The tool advertises an outputSchema: clients then require structuredContent on success. */
  readonly hasOutputSchema?: boolean;
}

export const JSON_MIME = 'application/json';
export const TEXT_MIME = 'text/plain; charset=utf-8';
