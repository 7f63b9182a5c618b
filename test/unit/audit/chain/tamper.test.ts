// The chained journal against an attacker with write access to the database
// (SPEC section 7.3), on both stores: an untouched journal of two hosts
// verifies; editing a record's result hash, deleting a record, swapping two
// entries, truncating a closed chain's tail and forging a checkpoint with
// another key are each named by `verifyJournal` with the record and the kind.
import { generateKeyPairSync } from 'node:crypto';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { canonicalJson } from '../../../../src/config/canonical-json.js';
import { checkpointSignedText, entryHash, type ChainEntry } from '../../../../src/audit/chain/chain-entry.js';
import { signerOf } from '../../../../src/audit/chain/chain-key.js';
import type { Journal } from '../../../../src/audit/journal.js';
import { verifyJournal, type VerifyReport } from '../../../../src/audit/verify-journal.js';
import { callFinish, callStart } from '../../../helpers/journal-fixtures.js';
import { describeEachStore, type StoreUnderTest } from '../../../helpers/journal-stores.js';

const readOnly = () => callStart({ tool: 'fs.read', sideEffect: 'read_only' });

/** Two hosts' worth of every kind of record, both closed cleanly. Returns the ids written. */
async function writeTwoHosts(store: StoreUnderTest): Promise<{ a: Journal; b: Journal; calls: string[]; approval: string }> {
  const a = await store.open({ checkpointEvery: 4 });
  const b = await store.open({ checkpointEvery: 4 });
  const calls: string[] = [];
  for (const journal of [a, b]) {
    const write = callStart({ idempotencyKey: `k-${journal.hostId}` });
    await journal.begin(write);
    await journal.finish(write.id, callFinish({ replay: '{"content":[]}' }));
    const refused = callStart({ decision: 'deny', rule: 'policies/org.yaml:3 tools.deny' });
    await journal.record(refused, callFinish({ status: 'denied', errorCode: 'policy_denied', resultHash: null, resultBytes: null }));
    const reads = [readOnly(), readOnly(), readOnly()];
    await Promise.all(reads.map((start) => journal.recordSoon(start, callFinish())));
    calls.push(write.id, refused.id, ...reads.map((start) => start.id));
  }
  const approval = `approval-${Math.random().toString(16).slice(2)}`;
  await a.createApproval({
    id: approval,
    tool: 'fs.write',
    argsHash: 'a'.repeat(64),
    sideEffect: 'write',
    rule: null,
    principal: 'ci-bot',
    sessionId: 's',
    callId: calls[0] as string,
    createdAt: Date.now(),
    expiresAt: Date.now() + 60_000,
    arguments: { path: 'docs/a.md' },
    effects: null,
  });
  await b.decideApproval(approval, 'approved', 'alice');
  await a.spendApproval(approval, 'fs.write', 'a'.repeat(64), calls[1] as string);
  await a.close();
  await b.close();
  return { a, b, calls, approval };
}

async function verify(store: StoreUnderTest): Promise<VerifyReport> {
  const reader = await store.open({ asHost: false, recover: false });
  return verifyJournal(reader);
}

/** Runs SQL against the store's database, as an attacker with the file or a login would. */
async function tamper(store: StoreUnderTest, sql: string, values: unknown[] = []): Promise<void> {
  if (store.db !== undefined) {
    await store.db.sql(
      sql.replace(
        /\?/g,
        (() => {
          let n = 0;
          return () => `$${++n}`;
        })(),
      ),
      values,
    );
    return;
  }
  const db = new Database(store.url.slice('sqlite:'.length));
  try {
    db.prepare(sql).run(...values);
  } finally {
    db.close();
  }
}

async function entries(store: StoreUnderTest): Promise<ChainEntry[]> {
  const reader = await store.open({ asHost: false, recover: false });
  return [...(await reader.readSnapshot()).entries];
}

describeEachStore('a chained journal', (store) => {
  it('an untouched journal of two hosts verifies: two closed chains, every record accounted for', async () => {
    const { a, b, calls } = await writeTwoHosts(store());
    // A reader that recovers (and finds nothing to recover) writes nothing, not even a chain of its own.
    await (await store().open({ asHost: false })).close();
    const report = await verify(store());
    expect(report.firstBreak).toBeNull();
    expect(report.ok).toBe(true);
    // Two host chains, and nothing of the readers (this verify's included): a reader that writes nothing opens no chain.
    const hostChains = report.chains.filter((chain) => chain.role === 'host');
    expect(report.chains).toHaveLength(2);
    expect(hostChains).toHaveLength(2);
    expect(hostChains.every((chain) => chain.closed && chain.checkpoints >= 2 && chain.unsignedEntries === 0)).toBe(true);
    expect(report.counts).toMatchObject({ calls: calls.length, approvals: 1, gaps: 0, predatingChain: 0 });
    expect(a.hostId).not.toBe(b.hostId);
  });

  it('a status change is a chained fact of its own: started, then completed, each verifies', async () => {
    const journal = await store().open();
    const start = callStart();
    await journal.begin(start);
    expect((await verify(store())).ok).toBe(true);
    await journal.finish(start.id, callFinish());
    const facts = (await entries(store())).filter((entry) => entry.ref === start.id);
    expect(facts.map((entry) => [entry.rev, JSON.parse(entry.record).status])).toEqual([
      [0, 'started'],
      [1, 'completed'],
    ]);
    expect((await verify(store())).ok).toBe(true);
  });

  it("names an edited result hash, with the record's id", async () => {
    const { calls } = await writeTwoHosts(store());
    const victim = calls[2] as string;
    await tamper(store(), `UPDATE calls SET result_hash = ? WHERE id = ?`, ['0'.repeat(64), victim]);
    const report = await verify(store());
    expect(report.ok).toBe(false);
    expect(report.firstBreak).toMatchObject({ kind: 'edited', recordId: victim });
    expect(report.firstBreak?.detail).toContain('resultHash');
  });

  it('names an edited chain entry (the fact rewritten in place), with its record id', async () => {
    const { calls } = await writeTwoHosts(store());
    const victim = calls[3] as string;
    const fact = (await entries(store())).find((entry) => entry.ref === victim) as ChainEntry;
    const edited = canonicalJson({ ...JSON.parse(fact.record), resultHash: '0'.repeat(64) });
    await tamper(store(), `UPDATE chain_entries SET record = ? WHERE chain_id = ? AND seq = ?`, [edited, fact.chain, fact.seq]);
    expect((await verify(store())).firstBreak).toMatchObject({ kind: 'edited', recordId: victim, chain: fact.chain, seq: fact.seq });
  });

  it('names a deleted record (its row gone)', async () => {
    const { calls } = await writeTwoHosts(store());
    const victim = calls[4] as string;
    await tamper(store(), `DELETE FROM calls WHERE id = ?`, [victim]);
    expect((await verify(store())).firstBreak).toMatchObject({ kind: 'deleted', recordId: victim });
  });

  it('names a deleted record (its row and its chain entry gone)', async () => {
    const { calls } = await writeTwoHosts(store());
    const victim = calls[2] as string;
    const fact = (await entries(store())).find((entry) => entry.ref === victim) as ChainEntry;
    await tamper(store(), `DELETE FROM calls WHERE id = ?`, [victim]);
    await tamper(store(), `DELETE FROM chain_entries WHERE ref = ?`, [victim]);
    const report = await verify(store());
    expect(report.firstBreak).toMatchObject({ kind: 'deleted', chain: fact.chain, seq: fact.seq + 1 });
  });

  it('names two swapped entries as reordered', async () => {
    await writeTwoHosts(store());
    const chain = (await entries(store())).filter((entry) => entry.kind === 'call');
    const [first, second] = [chain[1] as ChainEntry, chain.find((entry, index) => index > 1 && entry.chain === chain[1]?.chain) as ChainEntry];
    await tamper(store(), `UPDATE chain_entries SET seq = -1 WHERE chain_id = ? AND seq = ?`, [first.chain, first.seq]);
    await tamper(store(), `UPDATE chain_entries SET seq = ? WHERE chain_id = ? AND seq = ?`, [first.seq, second.chain, second.seq]);
    await tamper(store(), `UPDATE chain_entries SET seq = ? WHERE chain_id = ? AND seq = -1`, [second.seq, first.chain]);
    expect((await verify(store())).firstBreak).toMatchObject({ kind: 'reordered', chain: first.chain, seq: first.seq, recordId: second.ref });
  });

  it("names a closed chain's truncated tail (its last entries and their records cut)", async () => {
    const { a } = await writeTwoHosts(store());
    const all = await entries(store());
    const hostChain = all.filter((entry) => JSON.parse(all.find((open) => open.kind === 'open' && open.chain === entry.chain)?.record ?? '{}').hostId === a.hostId);
    const tail = hostChain.slice(-4);
    for (const entry of tail) {
      await tamper(store(), `DELETE FROM chain_entries WHERE chain_id = ? AND seq = ?`, [entry.chain, entry.seq]);
      if (entry.kind === 'call') await tamper(store(), `DELETE FROM calls WHERE id = ?`, [entry.ref]);
      if (entry.kind === 'approval') await tamper(store(), `DELETE FROM approvals WHERE id = ?`, [entry.ref]);
    }
    expect((await verify(store())).firstBreak).toMatchObject({ kind: 'truncated', chain: tail[0]?.chain });
  });

  it('names a checkpoint forged with another key, even with its entry hash recomputed', async () => {
    await writeTwoHosts(store());
    const all = await entries(store());
    const final = all.find((entry) => entry.kind === 'checkpoint' && JSON.parse(entry.record).final === true) as ChainEntry;
    const other = signerOf(generateKeyPairSync('ed25519').privateKey);
    const { seq, hash } = JSON.parse(final.record) as { seq: number; hash: string };
    const unsigned = { seq, hash, final: true, keyId: other.keyId };
    const forged = canonicalJson({ ...unsigned, signature: other.sign(checkpointSignedText(final.chain, unsigned)) });
    const rehashed = entryHash({ ...final, record: forged });
    await tamper(store(), `UPDATE chain_entries SET record = ?, hash = ? WHERE chain_id = ? AND seq = ?`, [forged, rehashed, final.chain, final.seq]);
    const report = await verify(store());
    expect(report.firstBreak).toMatchObject({ kind: 'checkpoint_invalid', chain: final.chain, seq: final.seq });
    expect(report.firstBreak?.detail).toContain(`another key (${other.keyId})`);
  });

  it('a record the store could not write leaves a gap entry with the count once writing works again', async () => {
    const journal = await store().open();
    // A trigger refuses one tool's records, as a full disk or a broken database would refuse them all.
    await installRefusal(store());
    const lost = [readOnly(), readOnly()].map((start) => ({ ...start, tool: 'refused.tool' }));
    const refusals = await Promise.allSettled(lost.map((start) => journal.recordSoon(start, callFinish())));
    expect(refusals.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    const later = readOnly();
    await journal.recordSoon(later, callFinish());
    const gaps = (await entries(store())).filter((entry) => entry.kind === 'gap');
    const reason = store().name === 'postgres' ? 'disk_full' : 'journal_unavailable';
    expect(gaps.map((entry) => JSON.parse(entry.record))).toEqual([expect.objectContaining({ count: 2, reason })]);
    const report = await verify(store());
    expect(report.ok).toBe(true);
    expect(report.counts).toMatchObject({ gaps: 1, lostRecords: 2 });
  });
});

// A trigger that refuses one tool's rows: on PostgreSQL with SQLSTATE 53100 (disk_full, as a full disk raises it),
// on SQLite with RAISE(ABORT) (a write that fails for another reason: journal_unavailable).
async function installRefusal(store: StoreUnderTest): Promise<void> {
  if (store.db !== undefined) {
    await store.db.sql(
      `CREATE FUNCTION refuse_tool() RETURNS trigger AS $$ BEGIN IF NEW.tool = 'refused.tool' THEN RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    await store.db.sql(`CREATE TRIGGER refuse_tool BEFORE INSERT ON calls FOR EACH ROW EXECUTE FUNCTION refuse_tool()`);
    return;
  }
  await tamper(store, `CREATE TRIGGER refuse_tool BEFORE INSERT ON calls WHEN NEW.tool = 'refused.tool' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
}
