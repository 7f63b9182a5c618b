// What only the PostgreSQL store has: schema refusals, migrations raced by
// hosts starting together, leases, artifact bytes in the database, and URLs
// that must not carry a password.
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../../src/audit/open-journal.js';
import { PG_SCHEMA_VERSION } from '../../../src/audit/postgres/pg-schema.js';
import { callFinish, callStart } from '../../helpers/journal-fixtures.js';
import { describeStore, rejection } from '../../helpers/journal-stores.js';

describeStore('postgres', 'PostgreSQL store', (store) => {
  it('migrates a fresh database to the current version and records it', async () => {
    await store().open();
    expect(await store().db!.sql(`SELECT application, version FROM toolhost_meta`)).toEqual([{ application: 'toolhost-journal', version: PG_SCHEMA_VERSION }]);
  });

  it('hosts starting together migrate once (advisory lock) and all open', async () => {
    const hosts = await Promise.all(Array.from({ length: 6 }, () => store().open()));
    expect(new Set(hosts.map((host) => host.hostId)).size).toBe(6);
    expect(await store().db!.sql(`SELECT version FROM toolhost_meta`)).toEqual([{ version: PG_SCHEMA_VERSION }]);
  });

  it('refuses a database written by a newer schema and leaves it untouched', async () => {
    await (await store().open()).close();
    await store().db!.sql(`UPDATE toolhost_meta SET version = $1`, [PG_SCHEMA_VERSION + 1]);
    const hostsBefore = await store().db!.sql(`SELECT count(*)::int AS n FROM hosts`);
    const error = await rejection(() => store().open());
    expect(error).toMatchObject({ code: 'journal_newer_schema', details: { version: PG_SCHEMA_VERSION + 1, supported: PG_SCHEMA_VERSION } });
    expect(await store().db!.sql(`SELECT count(*)::int AS n FROM hosts`)).toEqual(hostsBefore);
  });

  it('refuses a database that holds other tables, untouched', async () => {
    await store().db!.sql(`CREATE TABLE notes (body TEXT)`);
    expect((await rejection(() => store().open())).code).toBe('journal_foreign');
    expect(await store().db!.sql(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)).toEqual([{ table_name: 'notes' }]);
  });

  it("a host whose lease expired has its started calls interrupted by another; a live host's calls are left alone", async () => {
    const live = await store().open({ leaseMs: 60_000 });
    const liveCall = callStart();
    await live.begin(liveCall);
    const dying = await store().open({ leaseMs: 60_000 });
    const dyingCall = callStart({ idempotencyKey: 'k-dead' });
    await dying.begin(dyingCall);
    // The dying host stops renewing: make its lease run out now, by the database's clock.
    await store().db!.sql(`UPDATE hosts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [dying.hostId]);
    const finder = await store().open({ asHost: false });
    expect((await finder.get(dyingCall.id))?.status).toBe('interrupted');
    expect((await finder.get(liveCall.id))?.status).toBe('started');
    expect(await finder.findByIdempotencyKey('fs.write', 'k-dead')).toMatchObject({ id: dyingCall.id, status: 'interrupted' });
    expect(await store().db!.sql(`SELECT end_reason FROM hosts WHERE id = $1`, [dying.hostId])).toEqual([{ end_reason: 'expired' }]);
  });

  it('renews its lease in the background', async () => {
    const host = await store().open({ leaseMs: 300 });
    const lease = async () => (await store().db!.sql<{ t: Date }>(`SELECT lease_expires_at AS t FROM hosts WHERE id = $1`, [host.hostId]))[0]!.t.getTime();
    const call = callStart();
    await host.begin(call);
    // Bounded poll over several renewals (every leaseMs / 3), each later than the one before.
    let seen = await lease();
    let renewals = 0;
    for (let polls = 0; renewals < 4 && polls < 400; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const now = await lease();
      if (now > seen) (renewals++, (seen = now));
    }
    expect(renewals).toBe(4);
    // Past its first lease, a reader's sweep still leaves the live host's call alone.
    await store().open({ asHost: false });
    expect((await host.get(call.id))?.status).toBe('started');
  });

  it('a live host whose lease another host expired carries on under a new host row', async () => {
    const host = await store().open({ leaseMs: 300 });
    const first = host.hostId;
    const before = callStart();
    await host.begin(before);
    // As if the host had been cut off for longer than its lease: another host ends it. The live
    // host renews every 100 ms, and a renewal between the UPDATE and the sweep (a loaded CI
    // machine made one) rightly undoes the expiry: expire again until a sweep finds it.
    let status: string | undefined;
    for (let tries = 0; tries < 20 && status !== 'interrupted'; tries++) {
      await store().db!.sql(`UPDATE hosts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [first]);
      await store().open({ asHost: false });
      status = (await host.get(before.id))?.status;
    }
    expect(status).toBe('interrupted');
    for (let polls = 0; host.hostId === first && polls < 400; polls++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(host.hostId).not.toBe(first);
    const after = callStart();
    await host.begin(after);
    expect(await host.get(after.id)).toMatchObject({ status: 'started', hostId: host.hostId });
    expect(await store().db!.sql(`SELECT end_reason FROM hosts WHERE id = $1`, [first])).toEqual([{ end_reason: 'expired' }]);
  });

  it('refuses to serve artifact bytes that no longer match their hash', async () => {
    const journal = await store().open();
    const stored = await journal.putArtifact(new TextEncoder().encode('original'), 'text/plain');
    await store().db!.sql(`UPDATE artifacts SET bytes = $1 WHERE sha256 = $2`, [Buffer.from('tampered'), stored.sha256]);
    expect(await journal.getArtifact(stored.uri)).toBeUndefined();
  });

  it('finish after the host lost its row is logged, not thrown', async () => {
    const journal = await store().open();
    const call = callStart();
    await journal.begin(call);
    await store().db!.sql(`UPDATE calls SET status = 'interrupted' WHERE id = $1`, [call.id]);
    await journal.finish(call.id, callFinish());
    expect((await journal.get(call.id))?.status).toBe('interrupted');
  });
});

describe('journal URLs', () => {
  it.each(['postgres://alice:s3cret@db.example:5432/toolhost', 'postgresql://alice@db.example/toolhost?password=s3cret'])(
    'refuses a password in %s without echoing it',
    async (url) => {
      const error = await rejection(() => openJournal({ url, stateDir: '/nonexistent' }));
      expect(error).toEqual({ code: 'journal_url_invalid', details: { reason: 'password_in_url' } });
      try {
        await openJournal({ url, stateDir: '/nonexistent' });
      } catch (thrown) {
        expect(String((thrown as Error).message)).not.toContain('s3cret');
        expect((thrown as Error).message).toContain('PGPASSWORD');
      }
    },
  );

  it('refuses an unknown scheme', async () => {
    expect((await rejection(() => openJournal({ url: 'mysql://db/x', stateDir: '/nonexistent' }))).code).toBe('journal_url_invalid');
  });

  it('an unreachable server stops the open with a message that says what to check', async () => {
    // A closed loopback port: nothing listens on port 1.
    const error = await rejection(() => openJournal({ url: 'postgres://toolhost@127.0.0.1:1/toolhost', stateDir: '/nonexistent' }));
    expect(error).toMatchObject({ code: 'journal_unreachable', details: { location: 'postgres://toolhost@127.0.0.1:1/toolhost' } });
  });
});
