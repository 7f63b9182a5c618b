// Two host processes writing to one state folder at the same time: every
// record lands and the database stays intact.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { journalPathOf } from '../../../src/audit/state-dir.js';
import { spawnFixtureHost, useJournalProcessTest } from './journal-processes.js';

const RECORDS_PER_HOST = 500;

const t = useJournalProcessTest();

describe('two hosts on one state folder', () => {
  it(`both write ${RECORDS_PER_HOST} calls concurrently without loss or damage`, async () => {
    const pair = [
      spawnFixtureHost('write-many', t.temp.stateDir, t.marker, String(RECORDS_PER_HOST)),
      spawnFixtureHost('write-many', t.temp.stateDir, t.marker, String(RECORDS_PER_HOST)),
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

    const db = new Database(journalPathOf(t.temp.stateDir), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const counts = db.prepare(`SELECT host_id, status, count(*) AS n FROM calls GROUP BY host_id, status`).all();
      expect(counts).toHaveLength(2);
      expect(counts).toEqual(
        expect.arrayContaining([expect.objectContaining({ status: 'completed', n: RECORDS_PER_HOST })]),
      );
      expect(new Set(counts.map((row) => (row as { n: number }).n))).toEqual(new Set([RECORDS_PER_HOST]));
      expect(db.prepare(`SELECT count(*) FROM hosts WHERE end_reason = 'closed'`).pluck().get()).toBe(2);
    } finally {
      db.close();
    }
  });
});
