// `toolhost audit verify`, `audit export` and the audit filters as a user runs
// them: the built binary on each store. An untouched journal verifies (exit 0);
// an edited one exits 1 naming the break; an export verifies on its own in
// both formats, and an edited export does not.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, expect, it } from 'vitest';
import type { AuditJsonRecord } from '../../../src/audit/audit-format.js';
import type { VerifyReport } from '../../../src/audit/verify-journal.js';
import { callFinish, callStart } from '../../helpers/journal-fixtures.js';
import { describeEachStore, type StoreUnderTest } from '../../helpers/journal-stores.js';
import { assertJournalBuilt, REPO_ROOT } from '../../helpers/journal-processes.js';

function toolhost(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--no-node-snapshot', `${REPO_ROOT}bin/toolhost.js`, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => assertJournalBuilt());

/** Calls of two principals, decisions and codes, on one host that closes cleanly. */
async function seed(store: StoreUnderTest) {
  const journal = await store.open();
  const now = Date.now();
  const ci = callStart({ principal: 'ci-bot', tool: 'fs.write', decision: 'deny', rule: 'policies/org.yaml:12 sideEffects.deny', startedAt: now - 2 * 3_600_000 });
  const alice = callStart({ principal: 'alice', tool: 'fs.read', sideEffect: 'read_only', decision: 'allow', rule: null, startedAt: now - 60_000 });
  const timeout = callStart({ principal: 'alice', tool: 'fs.write', decision: 'ask', approval: 'approved', approvedBy: 'operator', approverName: 'bob', startedAt: now - 30_000 });
  await journal.record(ci, callFinish({ status: 'denied', errorCode: 'policy_denied', resultHash: null, resultBytes: null }));
  await journal.recordSoon(alice, callFinish());
  await journal.begin(timeout);
  await journal.finish(timeout.id, callFinish({ status: 'failed', errorCode: 'timeout', resultHash: null, resultBytes: null }));
  await journal.close();
  return { ci, alice, timeout };
}

describeEachStore('toolhost audit verify and export', (store) => {
  const where = () => ['--state', store().stateDir, '--journal', store().url];

  it('filters by principal, decision, code, rule, since and until', async () => {
    const { ci, alice, timeout } = await seed(store());
    const ids = (...filters: string[]) => {
      const result = toolhost('audit', ...where(), '--json', ...filters);
      expect(result.status, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as AuditJsonRecord[]).map((record) => record.id);
    };
    expect(ids('--principal', 'alice')).toEqual([timeout.id, alice.id]);
    expect(ids('--decision', 'deny')).toEqual([ci.id]);
    expect(ids('--code', 'timeout')).toEqual([timeout.id]);
    expect(ids('--rule', 'sideEffects.deny')).toEqual([ci.id]);
    expect(ids('--since', '1h')).toEqual([timeout.id, alice.id]);
    expect(ids('--until', '1h')).toEqual([ci.id]);
    expect(ids('--principal', 'alice', '--status', 'failed')).toEqual([timeout.id]);
    const [record] = JSON.parse(toolhost('audit', ...where(), '--json', '--code', 'timeout').stdout) as AuditJsonRecord[];
    expect(record).toMatchObject({ approvedBy: 'operator', approverName: 'bob' });
    const bad = toolhost('audit', ...where(), '--decision', 'maybe');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--decision');
  });

  it('verify exits 0 on an untouched journal and 1 naming an edited record', async () => {
    const { alice } = await seed(store());
    const ok = toolhost('audit', 'verify', ...where(), '--json');
    expect(ok.status, ok.stderr).toBe(0);
    expect((JSON.parse(ok.stdout) as VerifyReport).ok).toBe(true);
    expect(toolhost('audit', 'verify', ...where()).stdout).toMatch(/^ok: /);

    await editResultHash(store(), alice.id);
    const broken = toolhost('audit', 'verify', ...where(), '--json');
    expect(broken.status).toBe(1);
    expect((JSON.parse(broken.stdout) as VerifyReport).firstBreak).toMatchObject({ kind: 'edited', recordId: alice.id });
    const text = toolhost('audit', 'verify', ...where());
    expect(text.status).toBe(1);
    expect(text.stdout.split('\n')[0]).toBe(
      `BROKEN: edited: record ${alice.id} (chain ${(JSON.parse(broken.stdout) as VerifyReport).firstBreak?.chain}, entry ${(JSON.parse(broken.stdout) as VerifyReport).firstBreak?.seq})`,
    );
  });

  it('verify refuses a chain signed by a key the auditor does not trust', async () => {
    await seed(store());
    const report = JSON.parse(toolhost('audit', 'verify', ...where(), '--json').stdout) as VerifyReport;
    const keyId = report.chains[0]?.keyId as string;
    expect(toolhost('audit', 'verify', ...where(), '--trust-key', keyId).status).toBe(0);
    const untrusted = toolhost('audit', 'verify', ...where(), '--trust-key', 'feedfeedfeedfeed', '--json');
    expect(untrusted.status).toBe(1);
    expect((JSON.parse(untrusted.stdout) as VerifyReport).firstBreak).toMatchObject({ kind: 'untrusted_key' });
  });

  it.each(['jsonl', 'csv'] as const)('an export (%s) keeps every chain field and verifies on its own; an edited one does not', async (format) => {
    const { timeout } = await seed(store());
    const file = join(store().stateDir, `export.${format}`);
    const exported = toolhost('audit', 'export', ...where(), '--format', format, '--out', file);
    expect(exported.status, exported.stderr).toBe(0);
    const verified = toolhost('audit', 'verify', file, '--json');
    expect(verified.status, verified.stdout).toBe(0);
    const report = JSON.parse(verified.stdout) as VerifyReport;
    expect(report.counts.calls).toBe(3);
    expect(report.chains.every((chain) => chain.closed)).toBe(true);

    const text = readFileSync(file, 'utf8');
    const header = format === 'csv' ? text.split('\n')[0] : Object.keys(JSON.parse(text.split('\n')[0] as string) as object).join(',');
    for (const field of ['chain', 'seq', 'prev', 'hash', 'kind', 'ref', 'rev', 'at', 'record']) expect(header).toContain(field);
    // The timed-out call's error code changed in the file: its entry no longer matches its hash.
    writeFileSync(file, text.replace(/timeout/g, 'tool_error'));
    const edited = toolhost('audit', 'verify', file, '--json');
    expect(edited.status).toBe(1);
    expect((JSON.parse(edited.stdout) as VerifyReport).firstBreak).toMatchObject({ kind: 'edited', recordId: timeout.id });
  });
});

async function editResultHash(store: StoreUnderTest, id: string): Promise<void> {
  if (store.db !== undefined) {
    await store.db.sql(`UPDATE calls SET result_hash = $1 WHERE id = $2`, ['0'.repeat(64), id]);
    return;
  }
  const db = new Database(store.url.slice('sqlite:'.length));
  try {
    db.prepare(`UPDATE calls SET result_hash = ? WHERE id = ?`).run('0'.repeat(64), id);
  } finally {
    db.close();
  }
}
