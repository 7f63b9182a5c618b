// kill -9 a host while its call is `started`: on SQLite the next host to open
// the state folder sees the process gone; on PostgreSQL any host (or a reader:
// audit, reconcile) finds it once the dead host's lease expires. Either way the
// call becomes `interrupted` and its idempotency key is held until reconciled;
// a live host's call is never touched.
import { expect, it } from 'vitest';
import type { Journal } from '../../../src/audit/journal.js';
import { describeEachStore, type StoreUnderTest } from '../../helpers/journal-stores.js';
import { spawnFixtureHost, useJournalProcessTest } from '../../helpers/journal-processes.js';

const t = useJournalProcessTest();

/**
 * A short lease, so the dead host's calls are found quickly; renewed every third of it while
 * alive. Not shorter: a live host that misses its renewals (a stall on a loaded machine) counts
 * as dead, and the neighbour check below would rightly find its call interrupted.
 */
const LEASE_MS = 3000;
const FIXTURE_ENV = { ...process.env, TOOLHOST_JOURNAL_LEASE_MS: String(LEASE_MS) };

/** Opens readers until the call is interrupted (at once on SQLite; after the lease on PostgreSQL), bounded. */
async function openUntilInterrupted(store: StoreUnderTest, callId: string, asHost: boolean): Promise<Journal> {
  for (let attempt = 0; ; attempt++) {
    const journal = await store.open({ asHost, leaseMs: LEASE_MS });
    if ((await journal.get(callId))?.status === 'interrupted' || attempt >= 100) return journal;
    await journal.close();
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 4));
  }
}

describeEachStore('a host killed mid-call', (store) => {
  it('leaves a started record that another host finds interrupted', async () => {
    const host = spawnFixtureHost('begin-and-wait', store().stateDir, t.marker, store().url, [], FIXTURE_ENV);
    t.hosts.push(host);
    const ready = await host.ready;
    const callId = String(ready['id']);

    // While the host lives, another host on the store must not touch its call, however long it runs.
    const neighbour = await store().open({ leaseMs: LEASE_MS });
    expect((await neighbour.get(callId))?.status).toBe('started');
    expect(await neighbour.findByIdempotencyKey('fs.write', 'key-1')).toMatchObject({ id: callId, status: 'started' });
    await neighbour.close();

    host.child.kill('SIGKILL');
    expect(await host.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const restarted = await openUntilInterrupted(store(), callId, true);
    expect(await restarted.get(callId)).toMatchObject({ status: 'interrupted', hostId: ready['hostId'], reconciliation: null });
    expect(await restarted.findByIdempotencyKey('fs.write', 'key-1')).toMatchObject({ id: callId, status: 'interrupted', replay: null });
    expect((await restarted.query({ status: 'interrupted' })).map((record) => record.id)).toEqual([callId]);
    await restarted.reconcile(callId, 'rerun');
    expect(await restarted.findByIdempotencyKey('fs.write', 'key-1')).toBeUndefined();
  });

  it('a journal no host reopened is recovered by a reader (toolhost audit)', async () => {
    const host = spawnFixtureHost('begin-and-wait', store().stateDir, t.marker, store().url, [], FIXTURE_ENV);
    t.hosts.push(host);
    const callId = String((await host.ready)['id']);
    host.child.kill('SIGKILL');
    await host.exited;
    const reader = await openUntilInterrupted(store(), callId, false);
    expect((await reader.get(callId))?.status).toBe('interrupted');
  });
});
