// Idempotency (SPEC section 7): `_meta.idempotencyKey`, scoped per tool. A
// completed call with the key and the same arguments is answered with its
// recorded result instead of a second effect; the same key with other
// arguments is `invalid_arguments`; a call whose effect is unknown (interrupted,
// in flight, or reconciled as done) is `interrupted_side_effect`.
import type { IdempotencyRecord } from '../../audit/call-record.js';
import { HostError } from '../../errors.js';
import type { ContentBlock } from '../types.js';
import { isRecord } from '../../config/guards.js';

/** The journal lookup this stage needs (Journal.findByIdempotencyKey). */
interface IdempotencyIndex {
  findByIdempotencyKey(tool: string, key: string): Promise<IdempotencyRecord | undefined> | IdempotencyRecord | undefined;
}

/** What a replayed call answers: the result the first call's caller saw. */
export interface ReplayedResult {
  readonly fromCallId: string;
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  /** The result's `_meta` (host-only value, terminal mark), as recorded. */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** The serialized form, as recorded. */
  readonly serialized: string;
}

/** Longest idempotency key accepted (characters). */
const MAX_IDEMPOTENCY_KEY_CHARS = 256;

/** The key from a request's `_meta`, or null; `invalid_arguments` when it is not a short string. */
export function readIdempotencyKey(meta: Readonly<Record<string, unknown>>): string | null {
  const key = meta['idempotencyKey'];
  if (key === undefined || key === null) return null;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_CHARS) {
    throw new HostError('invalid_arguments', `_meta.idempotencyKey must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} characters.`, {
      path: '/_meta/idempotencyKey',
      keyword: 'type',
      expected: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_CHARS },
    });
  }
  return key;
}

/** undefined when the call may run; a replay when it already completed; throws otherwise. */
export function checkIdempotency(index: IdempotencyIndex, tool: string, key: string | null, argsHash: string): Promise<ReplayedResult | undefined> | undefined {
  // Without a key there is nothing to look up: undefined at once, no promise.
  if (key === null) return undefined;
  return findReplay(index, tool, key, argsHash);
}

async function findReplay(index: IdempotencyIndex, tool: string, key: string, argsHash: string): Promise<ReplayedResult | undefined> {
  const record = await index.findByIdempotencyKey(tool, key);
  if (!record) return undefined;
  return resolveKeyHolder(record, tool, argsHash);
}

/** What the record that holds a key means for a call with `argsHash`: a replay, or a refusal (thrown). */
export function resolveKeyHolder(record: IdempotencyRecord, tool: string, argsHash: string): ReplayedResult | undefined {
  if (record.argsHash !== argsHash) {
    throw new HostError('invalid_arguments', `The idempotency key was already used for ${tool} with different arguments.`, {
      path: '/_meta/idempotencyKey',
      keyword: 'idempotencyKey',
      expected: { argsHash: record.argsHash },
      callId: record.id,
    });
  }
  switch (record.status) {
    case 'completed': {
      const replay = record.replay === null ? undefined : parseReplay(record.replay, record.id);
      if (replay) return replay;
      // A completed record without a usable result: its effect happened, so never run it again.
      throw interrupted(tool, record.id, 'no_result');
    }
    case 'started':
      throw interrupted(tool, record.id, 'in_progress');
    case 'interrupted':
      throw interrupted(tool, record.id, 'interrupted');
    case 'skipped':
      throw interrupted(tool, record.id, 'reconciled_skip');
    default:
      return undefined;
  }
}

/** The serialized form of a result kept for replay. */
export function serializeForReplay(result: {
  content: readonly ContentBlock[];
  structuredContent?: Readonly<Record<string, unknown>>;
  meta?: Readonly<Record<string, unknown>>;
}): string {
  return JSON.stringify({
    content: result.content,
    ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
    ...(result.meta ? { meta: result.meta } : {}),
  });
}

function parseReplay(serialized: string, fromCallId: string): ReplayedResult | undefined {
  let value: unknown;
  try {
    value = JSON.parse(serialized);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { content, structuredContent, meta } = value as { content?: unknown; structuredContent?: unknown; meta?: unknown };
  if (!Array.isArray(content)) return undefined;
  return {
    fromCallId,
    content: content as ContentBlock[],
    ...(isRecord(structuredContent) ? { structuredContent } : {}),
    ...(isRecord(meta) ? { meta } : {}),
    serialized,
  };
}

function interrupted(tool: string, callId: string, state: 'in_progress' | 'interrupted' | 'reconciled_skip' | 'no_result'): HostError {
  const why = {
    in_progress: 'is still running or its host stopped answering',
    interrupted: 'was interrupted and its effect is unknown until an operator reconciles it',
    reconciled_skip: 'was reconciled as done and has no result to replay',
    no_result: 'completed but its result was not kept',
  }[state];
  return new HostError('interrupted_side_effect', `An earlier call to ${tool} with this idempotency key ${why}.`, { callId, state });
}
