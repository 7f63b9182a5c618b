import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../../src/audit/hash.js';
import { ArtifactStore, artifactUri, parseArtifactRef } from '../../../../src/audit/sqlite/artifacts.js';
import { SqliteJournal as Journal } from '../../../../src/audit/sqlite/sqlite-journal.js';
import { makeTempParent } from '../../../helpers/journal-fixtures.js';

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

const bytesOf = (text: string) => new TextEncoder().encode(text);
const fileOf = (sha: string) => join(temp.stateDir, 'artifacts', sha.slice(0, 2), sha);

describe('ArtifactStore', () => {
  it('round-trips bytes and MIME type by hash and by URI; files are private', () => {
    const store = new ArtifactStore(temp.stateDir, journal);
    const bytes = bytesOf('{"rows":[1,2,3]}'.repeat(1000));
    const stored = store.put(bytes, 'application/json');
    const sha = sha256Hex(bytes);
    expect(stored).toEqual({ sha256: sha, uri: `toolhost://artifacts/${sha}`, size: bytes.byteLength });
    expect(store.get(stored.uri)).toEqual({ mimeType: 'application/json', bytes });
    expect(store.get(sha)?.bytes).toEqual(bytes);
    expect(statSync(fileOf(sha)).mode & 0o777).toBe(0o600);
    expect(statSync(join(temp.stateDir, 'artifacts')).mode & 0o777).toBe(0o700);
  });

  it('stores identical content once and keeps its first MIME type', () => {
    const store = new ArtifactStore(temp.stateDir, journal);
    const first = store.put(bytesOf('same'), 'text/plain');
    const second = store.put(bytesOf('same'), 'application/octet-stream');
    expect(second).toEqual(first);
    expect(readdirSync(join(temp.stateDir, 'artifacts', first.sha256.slice(0, 2)))).toEqual([first.sha256]);
    expect(journal.database.prepare('SELECT count(*) FROM artifacts').pluck().get()).toBe(1);
    expect(store.get(first.uri)?.mimeType).toBe('text/plain');
  });

  it('hides expired artifacts and sweeps their files and rows', () => {
    const store = new ArtifactStore(temp.stateDir, journal, { ttlMs: 60_000 });
    const old = store.put(bytesOf('old'), 'text/plain');
    const later = Date.now() + 61_000;
    expect(store.get(old.uri, later)).toBeUndefined();
    expect(store.sweepExpired(later)).toBe(1);
    expect(existsSync(fileOf(old.sha256))).toBe(false);
    expect(journal.database.prepare('SELECT count(*) FROM artifacts').pluck().get()).toBe(0);
    expect(store.sweepExpired(later)).toBe(0);
  });

  it('a repeated put extends the expiry', () => {
    const store = new ArtifactStore(temp.stateDir, journal, { ttlMs: 60_000 });
    store.put(bytesOf('kept'), 'text/plain');
    const row = () => journal.database.prepare('SELECT created_at, expires_at FROM artifacts').get() as { created_at: number; expires_at: number };
    const before = row();
    const store2 = new ArtifactStore(temp.stateDir, journal, { ttlMs: 120_000 });
    store2.put(bytesOf('kept'), 'text/plain');
    expect(row().created_at).toBe(before.created_at);
    expect(row().expires_at).toBeGreaterThanOrEqual(before.expires_at + 60_000);
  });

  it.each(['../../journal.sqlite', `toolhost://artifacts/../${'a'.repeat(61)}`, 'A'.repeat(64), `toolhost://artifacts/${'a'.repeat(63)}`, `file:///${'a'.repeat(64)}`, ''])(
    'refuses the malformed reference %j',
    (ref) => {
      const store = new ArtifactStore(temp.stateDir, journal);
      expect(parseArtifactRef(ref)).toBeUndefined();
      expect(store.get(ref)).toBeUndefined();
    },
  );

  it('returns undefined for a well-formed but unknown hash', () => {
    const store = new ArtifactStore(temp.stateDir, journal);
    expect(store.get(artifactUri('0'.repeat(64)))).toBeUndefined();
  });

  it('refuses to serve a file whose bytes no longer match their hash', () => {
    const store = new ArtifactStore(temp.stateDir, journal);
    const stored = store.put(bytesOf('original'), 'text/plain');
    writeFileSync(fileOf(stored.sha256), 'tampered');
    expect(store.get(stored.uri)).toBeUndefined();
  });

  it('removes a file left without a row by a crash, on start', () => {
    const store = new ArtifactStore(temp.stateDir, journal);
    const stored = store.put(bytesOf('orphan'), 'text/plain');
    journal.database.prepare('DELETE FROM artifacts').run();
    expect(existsSync(fileOf(stored.sha256))).toBe(true);
    new ArtifactStore(temp.stateDir, journal);
    expect(existsSync(fileOf(stored.sha256))).toBe(false);
  });

  it('refuses a non-positive ttl', () => {
    expect(() => new ArtifactStore(temp.stateDir, journal, { ttlMs: 0 })).toThrow(RangeError);
  });
});
