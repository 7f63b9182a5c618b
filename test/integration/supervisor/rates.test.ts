// limits.rate (SPEC section 4.1): calls per principal in fixed windows, counted
// in the journal's store. SQLite for one host; on PostgreSQL two hosts share
// one window, and concurrent calls from both never count past the limit. Over
// a window a call fails call_limit (reason rate, retryAfterMs) before it runs,
// naming the window's rule; the smaller limit of two layers wins.
import { afterAll, describe, expect, it } from 'vitest';
import { SessionCounters } from '../../../src/supervisor/session-counters.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres.js';
import { closeAllHosts, errorOf, startHost, textOf, type TestHost } from '../../helpers/supervisor-host.js';

const databases: TestDatabase[] = [];
afterAll(async () => {
  await closeAllHosts();
  await Promise.all(databases.map((db) => db.drop()));
});

// A day-long window: a test never straddles two (the check below says so if one ever does).
const ORG_RATE = `limits:
  rate:
    - { tools: ["echo"], per: 24h, calls: 5 }
    - { tools: ["*"], per: 24h, calls: 100, class: destructive }`;
const TIGHTER = ['kind: Policy', 'name: tighter', 'limits:', '  rate:', '    - { tools: ["echo"], per: 24h, calls: 3 }', ''].join('\n');

function callAs(host: TestHost, principal: string) {
  const caller = host.supervisor.openSession(principal);
  return (value: unknown) => host.call('echo', { value }, { caller });
}

describe('rates on one host (SQLite)', () => {
  it('a session gets its calls, then call_limit with reason rate and retryAfterMs; another session has its own count', async () => {
    const host = await startHost({ policy: ORG_RATE, extraPolicies: [TIGHTER] });
    for (let i = 0; i < 3; i++) expect(textOf(await host.call('echo', { value: i }))).toBe(String(i));
    const over = errorOf(await host.call('echo', { value: 'four' }));
    expect(over.code).toBe('call_limit');
    // The tighter layer's window for the same tools and length is the one in force.
    expect(over.details).toMatchObject({ reason: 'rate', calls: 3, per: '24h', rule: expect.stringMatching(/extra-0\.yaml:5 limits\.rate$/) });
    expect(over.details['retryAfterMs']).toBeGreaterThan(0);
    expect(over.details['retryAfterMs']).toBeLessThanOrEqual(24 * 3_600_000);
    // A stdio session is its own principal.
    const other = new SessionCounters();
    expect(textOf(await host.call('echo', { value: 'other' }, { caller: { principal: null, counters: other } }))).toBe('other');
    // A tool no window names is not counted.
    expect(host.config.tools.get('counter')?.rates).toBeUndefined();
  });

  it('a principal over its rate stays refused; another principal is not affected', async () => {
    const host = await startHost({ policy: ORG_RATE, extraPolicies: [TIGHTER] });
    const alice = callAs(host, 'alice');
    for (let i = 0; i < 3; i++) textOf(await alice(i));
    for (let i = 0; i < 3; i++) expect(errorOf(await alice('again')).details['reason']).toBe('rate');
    expect(textOf(await callAs(host, 'bob')('bob'))).toBe('bob');
  });
});

describe.skipIf(postgresUnavailable !== undefined)(`rates shared by two hosts on one PostgreSQL${postgresUnavailable ? ` (${postgresUnavailable})` : ''}`, () => {
  async function twoHosts(): Promise<{ a: TestHost; b: TestHost; db: TestDatabase }> {
    const db = await createTestDatabase();
    databases.push(db);
    const start = () => startHost({ policy: ORG_RATE, extraPolicies: [TIGHTER], host: { journalUrl: db.url } });
    const a = await start();
    const b = await start();
    return { a, b, db };
  }

  it('one principal calling through both hosts shares one fixed window', async () => {
    const { a, b, db } = await twoHosts();
    const onA = callAs(a, 'alice');
    const onB = callAs(b, 'alice');
    expect(textOf(await onA('1'))).toBe('1');
    expect(textOf(await onB('2'))).toBe('2');
    expect(textOf(await onA('3'))).toBe('3');
    const over = errorOf(await onB('4'));
    const windows = await db.sql<{ window_start: string; calls: number }>(`SELECT window_start, calls FROM rate_windows WHERE principal = 'principal:alice' ORDER BY window_start`);
    // Had the day turned between two calls, there would be two windows (never within one test run in practice).
    expect(windows).toHaveLength(1);
    expect(windows[0]?.calls).toBe(3);
    expect(over.code).toBe('call_limit');
    expect(over.details).toMatchObject({ reason: 'rate', calls: 3 });
    expect(over.details['retryAfterMs']).toBeGreaterThan(0);
    // Another principal on either host has a window of its own.
    expect(textOf(await callAs(b, 'bob')('b'))).toBe('b');
  });

  it('concurrent calls from both hosts never count past the limit (atomic in the database)', async () => {
    const { a, b } = await twoHosts();
    const onA = callAs(a, 'carol');
    const onB = callAs(b, 'carol');
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? onA(i) : onB(i))));
    const ran = outcomes.filter((outcome) => outcome.kind === 'result').length;
    const limited = outcomes.filter((outcome) => outcome.kind === 'error' && outcome.error.code === 'call_limit' && outcome.error.details['reason'] === 'rate').length;
    expect([ran, limited]).toEqual([3, 9]);
  });
});
