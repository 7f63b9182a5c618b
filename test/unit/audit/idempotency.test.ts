import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal, JournalError, type CallStart } from '../../../src/audit/journal.js';
import { callFinish, callStart, makeTempParent } from './journal-fixtures.js';

let temp: ReturnType<typeof makeTempParent>;
let journal: Journal;

beforeEach(() => {
  temp = makeTempParent();
  journal = Journal.open(temp.stateDir);
});

afterEach(() => {
  journal.close();
  temp.remove();
});

/** A call still running when its host stopped (close marks it interrupted; dead hosts: see journal.test.ts). */
function interruptedCall(overrides: Partial<CallStart> = {}): CallStart {
  const start = callStart(overrides);
  journal.begin(start);
  journal.close();
  journal = Journal.open(temp.stateDir);
  expect(journal.get(start.id)?.status).toBe('interrupted');
  return start;
}

function catchJournalError(action: () => unknown): JournalError {
  try {
    action();
  } catch (error) {
    if (error instanceof JournalError) return error;
    throw error;
  }
  throw new Error('expected a JournalError');
}

describe('findByIdempotencyKey', () => {
  it('returns the completed call with its replay, scoped per tool', () => {
    const start = callStart({ idempotencyKey: 'k1' });
    journal.record(start, callFinish({ replay: '{"content":[{"type":"text","text":"ok"}]}' }));
    expect(journal.findByIdempotencyKey('fs.write', 'k1')).toEqual({
      id: start.id,
      status: 'completed',
      argsHash: start.argsHash,
      replay: '{"content":[{"type":"text","text":"ok"}]}',
      reconciliation: null,
    });
    expect(journal.findByIdempotencyKey('fs.delete', 'k1')).toBeUndefined();
    expect(journal.findByIdempotencyKey('fs.write', 'k2')).toBeUndefined();
  });

  it('reports a call in flight as started', () => {
    const start = callStart({ idempotencyKey: 'k1' });
    journal.begin(start);
    expect(journal.findByIdempotencyKey('fs.write', 'k1')).toMatchObject({ id: start.id, status: 'started', replay: null });
  });

  it.each(['failed', 'denied', 'rejected', 'cancelled'] as const)('a %s call does not hold its key', (status) => {
    journal.record(callStart({ idempotencyKey: 'k1' }), callFinish({ status, errorCode: 'tool_error' }));
    expect(journal.findByIdempotencyKey('fs.write', 'k1')).toBeUndefined();
  });

  it('an unreconciled interrupted call wins over a later refusal and a completed call', () => {
    const completed = callStart({ idempotencyKey: 'k1', startedAt: 1 });
    journal.record(completed, callFinish({ replay: '{}' }));
    const interrupted = interruptedCall({ idempotencyKey: 'k1' });
    journal.record(callStart({ idempotencyKey: 'k1' }), callFinish({ status: 'denied', errorCode: 'interrupted_side_effect' }));
    expect(journal.findByIdempotencyKey('fs.write', 'k1')).toMatchObject({ id: interrupted.id, status: 'interrupted', replay: null });
  });
});

describe('reconcile', () => {
  it('--rerun frees the key: the record stays interrupted, reconciled rerun', () => {
    const start = interruptedCall({ idempotencyKey: 'k1' });
    const record = journal.reconcile(start.id, 'rerun');
    expect(record).toMatchObject({ id: start.id, status: 'interrupted', reconciliation: 'rerun' });
    expect(record.reconciledAt).toBeTypeOf('number');
    expect(journal.findByIdempotencyKey('fs.write', 'k1')).toBeUndefined();
    // The rerun then completes and governs the key.
    const rerun = callStart({ idempotencyKey: 'k1', argsHash: start.argsHash });
    journal.record(rerun, callFinish({ replay: '{"n":2}' }));
    expect(journal.findByIdempotencyKey('fs.write', 'k1')).toMatchObject({ id: rerun.id, status: 'completed', replay: '{"n":2}' });
  });

  it('--skip closes the key as done, without a result', () => {
    const start = interruptedCall({ idempotencyKey: 'k1' });
    expect(journal.reconcile(start.id, 'skip')).toMatchObject({ status: 'skipped', reconciliation: 'skip' });
    expect(journal.findByIdempotencyKey('fs.write', 'k1')).toEqual({
      id: start.id,
      status: 'skipped',
      argsHash: start.argsHash,
      replay: null,
      reconciliation: 'skip',
    });
  });

  it('refuses an unknown id, a call that is not interrupted, and a second decision', () => {
    expect(catchJournalError(() => journal.reconcile('nope', 'rerun')).code).toBe('unknown_call');
    const done = callStart();
    journal.record(done, callFinish());
    const notInterrupted = catchJournalError(() => journal.reconcile(done.id, 'skip'));
    expect(notInterrupted.code).toBe('not_interrupted');
    expect(notInterrupted.details).toEqual({ id: done.id, status: 'completed', reconciliation: null });
    const start = interruptedCall();
    journal.reconcile(start.id, 'rerun');
    const twice = catchJournalError(() => journal.reconcile(start.id, 'skip'));
    expect(twice.code).toBe('not_interrupted');
    expect(twice.details).toEqual({ id: start.id, status: 'interrupted', reconciliation: 'rerun' });
  });
});
