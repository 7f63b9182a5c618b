// The journal around a call on the PostgreSQL store (SPEC sections 7 and 7.1),
// with real hosts in this process: a replay on another host (its own workspace
// proves the tool did not run there), the same key with other arguments, an
// interrupted key refused, and every call's record in the shared database. The
// SQLite versions are in journal.test.ts; real host processes racing: test/e2e/fleet.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashArgs } from '../../../src/audit/hash.js';
import { openJournal } from '../../../src/audit/open-journal.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres.js';
import { closeAllHosts, errorOf, resultOf, startHost } from './harness.js';

afterAll(closeAllHosts);

describe.skipIf(postgresUnavailable !== undefined)('idempotency on a PostgreSQL journal', () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await closeAllHosts();
    await db.drop();
  });
  const onFleet = () => startHost({ host: { journalUrl: db.url } });

  it('a key used on one host is replayed on another without running the tool there', async () => {
    const [first, second] = await Promise.all([onFleet(), onFleet()]);
    const meta = { idempotencyKey: 'order-42' };
    const ran = resultOf(await first.call('counter', { note: 'n' }, { meta }));
    expect(ran.structuredContent).toEqual({ count: 1, note: 'n' });
    const replayed = resultOf(await second.call('counter', { note: 'n' }, { meta }));
    expect(replayed.structuredContent).toEqual(ran.structuredContent);
    expect(readFileSync(join(first.workspace, 'counter.txt'), 'utf8')).toBe('1');
    expect(existsSync(join(second.workspace, 'counter.txt'))).toBe(false);
    // The same key with other arguments, on either host.
    expect(errorOf(await second.call('counter', { note: 'other' }, { meta })).code).toBe('invalid_arguments');
  });

  it('a key whose call was interrupted on another host is refused everywhere, without running', async () => {
    const host = await onFleet();
    const args = { note: 'pay' };
    const other = await openJournal({ url: db.url, stateDir: join(host.root, 'other-state'), sessionId: 'crashed-session' });
    await other.begin({
      id: 'interrupted-call-1',
      sessionId: 'crashed-session',
      principal: null,
      tool: 'counter',
      argsHash: hashArgs(args),
      sideEffect: 'local_mutation',
      decision: 'allow',
      rule: null,
      approval: 'not_needed',
      idempotencyKey: 'pay-1',
      startedAt: Date.now(),
    });
    await other.close();
    const error = errorOf(await host.call('counter', args, { meta: { idempotencyKey: 'pay-1' } }));
    expect(error).toMatchObject({ code: 'interrupted_side_effect', details: { callId: 'interrupted-call-1', state: 'interrupted' } });
    expect(existsSync(join(host.workspace, 'counter.txt'))).toBe(false);
  });

  it('every call leaves its record in the shared journal', async () => {
    const host = await onFleet();
    const outcome = resultOf(await host.call('counter', {}));
    const rows = await db.sql(`SELECT status, side_effect, args_hash FROM calls WHERE id = $1`, [outcome.callId]);
    expect(rows).toEqual([{ status: 'completed', side_effect: 'local_mutation', args_hash: hashArgs({}) }]);
  });
});
