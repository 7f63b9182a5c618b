// The bytes the chain hashes and signs: RFC 8785 canonical JSON from the
// `canonicalize` package, and the two fast forms the journal writes on the
// host's event loop (the spliced entry, the flat call record) held to it.
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalFlatJson, canonicalJson, flatKeys } from '../../../../src/config/canonical-json.js';
import { entryCanonicalText, entryHash, type ChainEntry } from '../../../../src/audit/chain/chain-entry.js';
import { chainedCallOfValues, chainedCallText } from '../../../../src/audit/chain/chain-records.js';
import { callRowValues } from '../../../../src/audit/call-row.js';
import { sha256Hex } from '../../../../src/audit/hash.js';
import { ChainWriter } from '../../../../src/audit/chain/chain-writer.js';
import { ephemeralSigner } from '../../../../src/audit/chain/chain-key.js';
import { verifySnapshot } from '../../../../src/audit/verify-journal.js';
import { callFact } from '../../../../src/audit/chain/chain-records.js';
import { callFinish, callStart } from '../../../helpers/journal-fixtures.js';

describe('canonical JSON', () => {
  it("is RFC 8785: keys by UTF-16 code units, ES number forms, minimal escapes (the RFC's own example values)", () => {
    expect(canonicalJson({ numbers: [333333333.33333329, 1e30, 4.5, 0.002, 1e-27], string: '€$\u000f\nA\'B"\\\\"/', literals: [null, true, false] })).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    expect(canonicalJson({ '\u20ac': 1, '\r': 2, '\ud83d\ude00': 3, '\u0080': 4, '1': 5 })).toBe('{"\\r":2,"1":5,"\u0080":4,"\u20ac":1,"\ud83d\ude00":3}');
  });

  it('makes a lone surrogate well formed instead of refusing the record', () => {
    expect(() => canonicalize({ tool: '\ud800' })).toThrow();
    expect(canonicalJson({ tool: '\ud800x' })).toBe('{"tool":"\ufffdx"}');
  });

  it('the flat form equals the library form for every kind of value a call record holds', () => {
    const values = callRowValues(
      callStart({
        principal: 'ci-\ud800bot',
        tool: 'fs.\u00e9crire',
        rule: 'p.yaml:3 "quoted" \\ key\n',
        idempotencyKey: '\u2028k',
        policyDigest: 'c'.repeat(64),
        approvedBy: 'operator',
        approverName: 'Zoë',
        arguments: '{"path":"a.txt"}',
      }),
      callFinish({ resultBytes: 0, egressAdmitted: 3 }),
      'host-1',
    );
    const call = chainedCallOfValues(values);
    expect(chainedCallText(call)).toBe(canonicalJson(call));
    const keys = flatKeys(['a', 'b', 'c']);
    expect(canonicalFlatJson({ c: -0, a: 1e21, b: false }, keys)).toBe(canonicalJson({ c: -0, a: 1e21, b: false }));
    expect(canonicalFlatJson({ a: true, c: null }, keys)).toBe('{"a":true,"c":null}');
    expect(canonicalFlatJson({}, keys)).toBe('{}');
    // Anything that is not flat goes through the library.
    expect(canonicalFlatJson({ a: { z: 1, y: 2 } }, flatKeys(['a']))).toBe('{"a":{"y":2,"z":1}}');
  });

  it('the spliced entry text is the canonical JSON of the entry object', () => {
    const record = canonicalJson({ b: 1, a: 'x' });
    const entry = { chain: 'c-1', prev: 'p'.repeat(64), kind: 'call' as const, ref: 'call-1', rev: 1, at: 1_700_000_000_000, record };
    expect(entryCanonicalText(entry)).toBe(canonicalJson({ ...entry, record: JSON.parse(record) as unknown, v: 1 }));
    expect(entryCanonicalText({ ...entry, prev: null })).toBe(canonicalJson({ ...entry, prev: null, record: JSON.parse(record) as unknown, v: 1 }));
    expect(entryHash(entry)).toBe(sha256Hex(entryCanonicalText(entry)));
  });
});

describe('ChainWriter', () => {
  const facts = (n: number) => Array.from({ length: n }, () => callFact(chainedCallOfValues(callRowValues(callStart(), callFinish(), 'h')), 0));

  it('opens with its key, links each entry to the one before, signs a checkpoint every N entries and at the end', () => {
    const writer = new ChainWriter({ role: 'host', hostId: () => 'h', signer: ephemeralSigner, checkpointEvery: 3 });
    const written: ChainEntry[] = [];
    for (let i = 0; i < 4; i++) {
      const prepared = writer.prepare(facts(1));
      writer.commit(prepared);
      written.push(...prepared.entries);
    }
    const closing = writer.prepare([], { final: true });
    writer.commit(closing);
    written.push(...closing.entries);
    expect(written.map((entry) => entry.kind)).toEqual(['open', 'call', 'call', 'checkpoint', 'call', 'call', 'checkpoint']);
    expect(written.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(written.slice(1).every((entry, index) => entry.prev === written[index]?.hash)).toBe(true);
    expect(writer.isFinal).toBe(true);
    const report = verifySnapshot({ entries: written, chainedSince: null });
    expect(report).toMatchObject({ ok: true, chains: [{ closed: true, checkpoints: 2, unsignedEntries: 0 }] });
    expect(JSON.parse(written[6]?.record ?? '{}')).toMatchObject({ final: true, seq: 6, hash: written[5]?.hash });
  });

  it('a failed write moves nothing: the next one reuses its place and leads with a gap counting the lost records', () => {
    const writer = new ChainWriter({ role: 'host', hostId: () => 'h', signer: ephemeralSigner, checkpointEvery: 100 });
    const first = writer.prepare(facts(1));
    writer.commit(first);
    writer.prepare(facts(2));
    writer.fail(2, 'disk_full');
    writer.prepare(facts(1));
    writer.fail(1, 'disk_full');
    const next = writer.prepare(facts(1));
    writer.commit(next);
    expect(next.entries.map((entry) => [entry.kind, entry.seq])).toEqual([
      ['gap', 3],
      ['call', 4],
    ]);
    expect(next.entries[0]?.prev).toBe(first.entries[first.entries.length - 1]?.hash);
    expect(JSON.parse(next.entries[0]?.record ?? '{}')).toMatchObject({ count: 3, reason: 'disk_full' });
    // The gap is written once.
    expect(writer.prepare(facts(1)).entries.map((entry) => entry.kind)).toEqual(['call']);
  });
});
