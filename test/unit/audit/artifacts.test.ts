// Artifacts through the journal interface, on both stores: content-addressed,
// deduplicated, readable by any host of the store, hash-checked on read.
import { expect, it } from 'vitest';
import { sha256Hex } from '../../../src/audit/hash.js';
import { describeEachStore } from '../../helpers/journal-stores.js';

const bytesOf = (text: string) => new TextEncoder().encode(text);

describeEachStore('artifacts', (store) => {
  it('round-trips bytes and MIME type by hash and by URI', async () => {
    const journal = await store().open();
    const bytes = bytesOf('{"rows":[1,2,3]}'.repeat(1000));
    const stored = await journal.putArtifact(bytes, 'application/json');
    const sha = sha256Hex(bytes);
    expect(stored).toEqual({ sha256: sha, uri: `toolhost://artifacts/${sha}`, size: bytes.byteLength });
    expect(await journal.getArtifact(stored.uri)).toEqual({ mimeType: 'application/json', bytes });
    expect((await journal.getArtifact(sha))?.bytes).toEqual(bytes);
  });

  it('stores identical content once and keeps its first MIME type', async () => {
    const journal = await store().open();
    const first = await journal.putArtifact(bytesOf('same'), 'text/plain');
    expect(await journal.putArtifact(bytesOf('same'), 'application/octet-stream')).toEqual(first);
    expect((await journal.getArtifact(first.uri))?.mimeType).toBe('text/plain');
  });

  it('an artifact one host stored is read by another host of the same store', async () => {
    const maker = await store().open();
    const stored = await maker.putArtifact(bytesOf('made on host one'), 'text/plain');
    const other = await store().open();
    expect(await other.getArtifact(stored.uri)).toEqual({ mimeType: 'text/plain', bytes: bytesOf('made on host one') });
  });

  it.each(['../../journal.sqlite', `toolhost://artifacts/../${'a'.repeat(61)}`, 'A'.repeat(64), `file:///${'a'.repeat(64)}`, ''])(
    'refuses the malformed reference %j',
    async (ref) => {
      const journal = await store().open();
      expect(await journal.getArtifact(ref)).toBeUndefined();
    },
  );

  it('returns undefined for a well-formed but unknown hash', async () => {
    const journal = await store().open();
    expect(await journal.getArtifact(`toolhost://artifacts/${'0'.repeat(64)}`)).toBeUndefined();
  });
});
