// checkIdempotency against a real journal: every state a key can be in.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallStart } from '../../../src/audit/call-record.js';
import { hashArgs } from '../../../src/audit/hash.js';
import { SqliteJournal as Journal } from '../../../src/audit/sqlite/sqlite-journal.js';
import { HostError } from '../../../src/errors.js';
import { checkIdempotency, readIdempotencyKey, resolveKeyHolder, serializeForReplay } from '../../../src/supervisor/idempotency.js';

let dir: string;
let journal: Journal;
const ARGS_HASH = hashArgs({ a: 1 });

function start(id: string, key: string): CallStart {
  return { id, sessionId: 's', principal: null, tool: 'write', argsHash: ARGS_HASH, sideEffect: 'local_mutation', decision: 'allow', rule: null, approval: 'not_needed', idempotencyKey: key, startedAt: Date.now() };
}

function codeAndDetails(run: () => unknown): { code: string; details: Record<string, unknown> } {
  try {
    run();
  } catch (error) {
    if (error instanceof HostError) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error('expected a HostError');
}

// The stage's decision, at once: the SQLite journal answers synchronously (checkIdempotency awaits the same).
function checkNow(index: Journal, tool: string, key: string | null, argsHash: string) {
  if (key === null) return undefined;
  const record = index.findByIdempotencyKey(tool, key);
  return record ? resolveKeyHolder(record, tool, argsHash) : undefined;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolhost-idem-'));
  journal = Journal.open(dir);
});

afterEach(() => {
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('checkIdempotency', () => {
  it('awaits the journal and resolves the holder', async () => {
    journal.record(start('c0', 'k0'), { status: 'completed', errorCode: null, resultHash: null, resultBytes: null, replay: '{"content":[]}', endedAt: Date.now() });
    await expect(checkIdempotency({ findByIdempotencyKey: async (t, k) => journal.findByIdempotencyKey(t, k) }, 'write', 'k0', ARGS_HASH)).resolves.toMatchObject({ fromCallId: 'c0' });
    await expect(checkIdempotency(journal, 'write', null, ARGS_HASH)).resolves.toBeUndefined();
  });

  it('lets a call without a key, or with a new key, run', () => {
    expect(checkNow(journal, 'write', null, ARGS_HASH)).toBeUndefined();
    expect(checkNow(journal, 'write', 'new', ARGS_HASH)).toBeUndefined();
  });

  it('replays a completed call with the same arguments', () => {
    const result = { content: [{ type: 'text' as const, text: '{"ok":true}' }], structuredContent: { ok: true } };
    const replay = serializeForReplay(result);
    journal.record(start('c1', 'k'), { status: 'completed', errorCode: null, resultHash: null, resultBytes: null, replay, endedAt: Date.now() });
    expect(checkNow(journal, 'write', 'k', ARGS_HASH)).toEqual({ fromCallId: 'c1', ...result, serialized: replay });
  });

  it('refuses other arguments with invalid_arguments', () => {
    journal.record(start('c1', 'k'), { status: 'completed', errorCode: null, resultHash: null, resultBytes: null, replay: '{"content":[]}', endedAt: Date.now() });
    expect(codeAndDetails(() => checkNow(journal, 'write', 'k', hashArgs({ a: 2 })))).toMatchObject({
      code: 'invalid_arguments',
      details: { path: '/_meta/idempotencyKey', callId: 'c1' },
    });
  });

  it('refuses a key whose call is still running, was interrupted, or was reconciled as done', () => {
    journal.begin(start('running', 'k-run'));
    expect(codeAndDetails(() => checkNow(journal, 'write', 'k-run', ARGS_HASH))).toEqual({
      code: 'interrupted_side_effect',
      details: { callId: 'running', state: 'in_progress' },
    });
    journal.close();
    journal = Journal.open(dir);
    expect(codeAndDetails(() => checkNow(journal, 'write', 'k-run', ARGS_HASH)).details).toEqual({ callId: 'running', state: 'interrupted' });
    journal.reconcile('running', 'skip');
    expect(codeAndDetails(() => checkNow(journal, 'write', 'k-run', ARGS_HASH)).details).toEqual({ callId: 'running', state: 'reconciled_skip' });
  });

  it('lets a key run again after an interrupted call is reconciled with rerun, or after a failure', () => {
    journal.begin(start('int', 'k-rerun'));
    journal.close();
    journal = Journal.open(dir);
    journal.reconcile('int', 'rerun');
    expect(checkNow(journal, 'write', 'k-rerun', ARGS_HASH)).toBeUndefined();
    journal.record(start('f', 'k-failed'), { status: 'failed', errorCode: 'timeout', resultHash: null, resultBytes: null, replay: null, endedAt: Date.now() });
    expect(checkNow(journal, 'write', 'k-failed', ARGS_HASH)).toBeUndefined();
  });

  it('scopes keys per tool', () => {
    journal.begin(start('w', 'k'));
    expect(checkNow(journal, 'other_tool', 'k', ARGS_HASH)).toBeUndefined();
  });
});

describe('readIdempotencyKey', () => {
  it('reads a short string and refuses anything else', () => {
    expect(readIdempotencyKey({})).toBeNull();
    expect(readIdempotencyKey({ idempotencyKey: 'abc' })).toBe('abc');
    for (const bad of [42, '', 'x'.repeat(257), { k: 1 }]) {
      expect(codeAndDetails(() => readIdempotencyKey({ idempotencyKey: bad })).code).toBe('invalid_arguments');
    }
  });
});
