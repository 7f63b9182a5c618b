// Artifact expiry through the journal interface, on both stores (SPEC 7.1):
// every artifact gets the TTL, an expired one is never served, a host's first
// put sweeps expired rows (and SQLite's files), and a repeated put extends the
// expiry without moving its creation. Expiry is set by editing the store's own
// row (no clock is waited on).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { DEFAULT_ARTIFACT_TTL_MS } from '../../../src/audit/artifact-ref.js';
import { openPostgresStore } from '../../../src/audit/postgres/pg-store.js';
import { openSqliteStore } from '../../../src/audit/sqlite/sqlite-store.js';
import { describeEachStore, type StoreUnderTest } from '../../helpers/journal-stores.js';

const bytesOf = (text: string) => new TextEncoder().encode(text);

interface ArtifactRow {
  sha256: string;
  createdAt: number;
  expiresAt: number;
}

/** The store's artifact rows, read with its own engine. */
async function artifactRows(store: StoreUnderTest): Promise<ArtifactRow[]> {
  const query = 'SELECT sha256, created_at, expires_at FROM artifacts ORDER BY sha256';
  const rows =
    store.db !== undefined
      ? await store.db.sql<{ sha256: string; created_at: string | number; expires_at: string | number }>(query)
      : withSqlite(store, (db) => db.prepare(query).all() as Array<{ sha256: string; created_at: number; expires_at: number }>);
  return rows.map((row) => ({ sha256: row.sha256, createdAt: Number(row.created_at), expiresAt: Number(row.expires_at) }));
}

async function setExpiry(store: StoreUnderTest, sha256: string, expiresAt: number): Promise<void> {
  const update = 'UPDATE artifacts SET expires_at = $1 WHERE sha256 = $2';
  if (store.db !== undefined) await store.db.sql(update, [expiresAt, sha256]);
  else withSqlite(store, (db) => db.prepare(update.replace('$1', '?').replace('$2', '?')).run(expiresAt, sha256));
}

function withSqlite<R>(store: StoreUnderTest, use: (db: Database.Database) => R): R {
  const db = new Database(store.url.slice('sqlite:'.length));
  try {
    return use(db);
  } finally {
    db.close();
  }
}

describeEachStore('artifact expiry', (store) => {
  it('gives every artifact the default TTL', async () => {
    const journal = await store().open();
    const before = Date.now();
    const stored = await journal.putArtifact(bytesOf('ttl'), 'text/plain');
    const [row] = await artifactRows(store());
    expect(row).toMatchObject({ sha256: stored.sha256 });
    expect(row!.createdAt).toBeGreaterThanOrEqual(before);
    expect(row!.expiresAt - row!.createdAt).toBe(DEFAULT_ARTIFACT_TTL_MS);
  });

  it('never serves an expired artifact, to its host or another', async () => {
    const maker = await store().open();
    const stored = await maker.putArtifact(bytesOf('expired'), 'text/plain');
    expect(await maker.getArtifact(stored.uri)).toBeDefined();
    await setExpiry(store(), stored.sha256, Date.now() - 1);
    expect(await maker.getArtifact(stored.uri)).toBeUndefined();
    expect(await maker.getArtifact(stored.sha256)).toBeUndefined();
    const other = await store().open();
    expect(await other.getArtifact(stored.uri)).toBeUndefined();
  });

  it("a host's first put sweeps the expired artifacts and keeps the live ones", async () => {
    const maker = await store().open();
    const old = await maker.putArtifact(bytesOf('old'), 'text/plain');
    const live = await maker.putArtifact(bytesOf('live'), 'text/plain');
    await setExpiry(store(), old.sha256, Date.now() - 1);
    await maker.close();
    const next = await store().open();
    const fresh = await next.putArtifact(bytesOf('fresh'), 'text/plain');
    expect((await artifactRows(store())).map((row) => row.sha256).sort()).toEqual([live.sha256, fresh.sha256].sort());
    if (store().name === 'sqlite') {
      const fileOf = (sha: string) => join(store().stateDir, 'artifacts', sha.slice(0, 2), sha);
      expect(existsSync(fileOf(old.sha256))).toBe(false);
      expect(existsSync(fileOf(live.sha256))).toBe(true);
    }
    expect(await next.getArtifact(live.uri)).toEqual({ mimeType: 'text/plain', bytes: bytesOf('live') });
  });

  it('a repeated put extends the expiry and keeps the creation time', async () => {
    const journal = await store().open();
    const stored = await journal.putArtifact(bytesOf('kept'), 'text/plain');
    const [first] = await artifactRows(store());
    // Close to expiring: a put of the same bytes gives it a whole TTL again.
    const soon = Date.now() + 60_000;
    await setExpiry(store(), stored.sha256, soon);
    const before = Date.now();
    expect(await journal.putArtifact(bytesOf('kept'), 'text/plain')).toEqual(stored);
    const [again] = await artifactRows(store());
    expect(again!.createdAt).toBe(first!.createdAt);
    expect(again!.expiresAt).toBeGreaterThanOrEqual(before + DEFAULT_ARTIFACT_TTL_MS);
  });

  it('a repeated put never shortens a later expiry', async () => {
    const journal = await store().open();
    const stored = await journal.putArtifact(bytesOf('long'), 'text/plain');
    const far = Date.now() + 10 * DEFAULT_ARTIFACT_TTL_MS;
    await setExpiry(store(), stored.sha256, far);
    await journal.putArtifact(bytesOf('long'), 'text/plain');
    expect((await artifactRows(store()))[0]!.expiresAt).toBe(far);
  });

  it('refuses a TTL that is not a positive number of milliseconds', async () => {
    for (const ttl of [0, -1, Number.NaN]) {
      const open =
        store().db !== undefined
          ? () => openPostgresStore(store().url, 'test database', { asHost: false, artifactTtlMs: ttl })
          : async () => openSqliteStore(store().stateDir, { file: store().url.slice('sqlite:'.length), artifactTtlMs: ttl });
      await expect(open(), `ttl ${ttl}`).rejects.toThrow(RangeError);
    }
  });
});
