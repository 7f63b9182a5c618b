// Two host processes writing to one journal at the same time (one state
// folder on SQLite, one database on PostgreSQL): every record lands and the
// store stays intact.
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { journalPathOf } from '../../../src/audit/state-dir.js';
import { describeEachStore } from '../../helpers/journal-stores.js';
import { spawnFixtureHost, useJournalProcessTest } from '../../helpers/journal-processes.js';

const RECORDS_PER_HOST = 500;

const t = useJournalProcessTest();

describeEachStore('two hosts on one journal', (store) => {
  it(`both write ${RECORDS_PER_HOST} calls concurrently without loss or damage`, async () => {
    const pair = [
      spawnFixtureHost('write-many', store().stateDir, t.marker, store().url, [String(RECORDS_PER_HOST)]),
      spawnFixtureHost('write-many', store().stateDir, t.marker, store().url, [String(RECORDS_PER_HOST)]),
    ];
    t.hosts.push(...pair);
    await Promise.all(pair.map((host) => host.ready));
    // Both hosts have opened (and migrated) the journal; release them together.
    for (const host of pair) host.child.stdin?.end('go\n');
    const exits = await Promise.all(pair.map((host) => host.exited));
    expect(exits).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
    expect(pair.map((host) => host.lines)).toEqual([[{ done: RECORDS_PER_HOST }], [{ done: RECORDS_PER_HOST }]]);

    const reader = await store().open({ asHost: false });
    const records = await reader.query();
    expect(records).toHaveLength(2 * RECORDS_PER_HOST);
    const perHost = new Map<string, number>();
    for (const record of records) {
      expect(record.status).toBe('completed');
      perHost.set(record.hostId, (perHost.get(record.hostId) ?? 0) + 1);
    }
    expect([...perHost.values()]).toEqual([RECORDS_PER_HOST, RECORDS_PER_HOST]);

    if (store().name === 'sqlite') {
      const db = new Database(journalPathOf(store().stateDir), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(db.prepare(`SELECT count(*) FROM hosts WHERE end_reason = 'closed'`).pluck().get()).toBe(2);
      } finally {
        db.close();
      }
    } else {
      expect(await store().db!.sql(`SELECT count(*)::int AS n FROM hosts WHERE end_reason = 'closed'`)).toEqual([{ n: 2 }]);
    }
  });
});
