// `toolhost audit` and `toolhost reconcile` as a user runs them: the built
// binary, a real journal on each store (--journal), exit codes 0 / 1 / 2.
import { spawnSync } from 'node:child_process';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditJsonRecord } from '../../../src/audit/audit-format.js';
import { callFinish, callStart, makeTempParent } from '../../helpers/journal-fixtures.js';
import { describeEachStore, type StoreUnderTest } from '../../helpers/journal-stores.js';
import { assertJournalBuilt, REPO_ROOT } from '../../helpers/journal-processes.js';

function toolhost(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--no-node-snapshot', `${REPO_ROOT}bin/toolhost.js`, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A journal holding a completed read, a failed write and an interrupted write with a key. */
async function seedJournal(store: StoreUnderTest) {
  const journal = await store.open();
  const read = callStart({ tool: 'fs.read', sideEffect: 'read', startedAt: Date.now() - 3 * 3_600_000 });
  const failed = callStart({ tool: 'fs.write' });
  const interrupted = callStart({ tool: 'fs.write', idempotencyKey: 'k1' });
  await journal.record(read, callFinish({ endedAt: read.startedAt + 40 }));
  await journal.record(failed, callFinish({ status: 'failed', errorCode: 'timeout', resultHash: null, resultBytes: null }));
  await journal.begin(interrupted);
  // Closing with the call still running leaves it interrupted, as a crash would.
  await journal.close();
  return { read, failed, interrupted };
}

beforeAll(() => assertJournalBuilt());

describe('toolhost audit without a journal', () => {
  let temp: ReturnType<typeof makeTempParent>;
  beforeEach(() => {
    temp = makeTempParent();
  });
  afterEach(() => {
    temp.remove();
  });

  it('exits 1 when the state folder holds no journal, without creating one', async () => {
    const result = toolhost('audit', '--state', temp.stateDir, '--json');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('no journal');
    expect(spawnSync('test', ['-e', temp.stateDir]).status).toBe(1);
  });
});

describeEachStore('toolhost audit', (store) => {
  const where = () => ['--state', store().stateDir, '--journal', store().url];

  it('prints every call as documented JSON, newest first', async () => {
    const { read, failed, interrupted } = await seedJournal(store());
    const result = toolhost('audit', ...where(), '--json');
    expect(result.status).toBe(0);
    const records = JSON.parse(result.stdout) as AuditJsonRecord[];
    expect(records.map((record) => record.id)).toEqual([interrupted.id, failed.id, read.id]);
    expect(records[1]).toMatchObject({ tool: 'fs.write', status: 'failed', errorCode: 'timeout', argsHash: failed.argsHash, rule: failed.rule });
    expect(records[0]).toMatchObject({ status: 'interrupted', idempotencyKey: 'k1', reconciliation: null });
    expect(records[2]).toMatchObject({ status: 'completed', durationMs: 40, startedAt: new Date(read.startedAt).toISOString() });
  });

  it('filters by tool, status and since', async () => {
    const { read, failed, interrupted } = await seedJournal(store());
    const ids = (...args: string[]) => {
      const result = toolhost('audit', ...where(), '--json', ...args);
      expect(result.status).toBe(0);
      return (JSON.parse(result.stdout) as AuditJsonRecord[]).map((record) => record.id);
    };
    expect(ids('--tool', 'fs.read')).toEqual([read.id]);
    expect(ids('--status', 'interrupted')).toEqual([interrupted.id]);
    expect(ids('--since', '1h')).toEqual([interrupted.id, failed.id]);
    expect(ids('--since', new Date(read.startedAt - 1000).toISOString(), '--tool', 'fs.read')).toEqual([read.id]);
    expect(ids('--limit', '1')).toEqual([interrupted.id]);
  });

  it('prints a table without --json (tab-separated in a pipe)', async () => {
    const { interrupted } = await seedJournal(store());
    const result = toolhost('audit', ...where(), '--status', 'interrupted');
    expect(result.status).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^STARTED\tID\tPRINCIPAL\tTOOL\tSTATUS/);
    expect(lines[1]).toContain(interrupted.id);
  });

  it.each([[['--status', 'bogus']], [['--since', 'last tuesday']], [['--limit', '-3']], [['--frobnicate']], [['extra-positional']]])('exits 2 on bad usage %j', async (args) => {
    await seedJournal(store());
    const result = toolhost('audit', ...where(), ...args);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
  });

  it('answers --help with exit 0', async () => {
    const result = toolhost('audit', '--help');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('--since');
  });
});

describeEachStore('toolhost reconcile', (store) => {
  const where = () => ['--state', store().stateDir, '--journal', store().url];
  it('--rerun reconciles an interrupted call once; a second decision exits 1', async () => {
    const { interrupted } = await seedJournal(store());
    const first = toolhost('reconcile', interrupted.id, '--rerun', ...where());
    expect(first.status).toBe(0);
    const journal = await store().open({ asHost: false });
    expect(await journal.get(interrupted.id)).toMatchObject({ status: 'interrupted', reconciliation: 'rerun' });
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toBeUndefined();
    const second = toolhost('reconcile', interrupted.id, '--skip', ...where());
    expect(second.status).toBe(1);
  });

  it('--skip marks the call skipped and holds its key', async () => {
    const { interrupted } = await seedJournal(store());
    expect(toolhost('reconcile', interrupted.id, '--skip', ...where()).status).toBe(0);
    const journal = await store().open({ asHost: false });
    expect(await journal.findByIdempotencyKey('fs.write', 'k1')).toMatchObject({ id: interrupted.id, status: 'skipped', reconciliation: 'skip' });
  });

  it('exits 1 for an unknown id or a call that was not interrupted', async () => {
    const { failed } = await seedJournal(store());
    expect(toolhost('reconcile', 'no-such-call', '--rerun', ...where()).status).toBe(1);
    expect(toolhost('reconcile', failed.id, '--rerun', ...where()).status).toBe(1);
  });

  it.each([[['--rerun']], [['some-id']], [['some-id', '--rerun', '--skip']], [['a', 'b', '--skip']]])('exits 2 on bad usage %j', async (args) => {
    await seedJournal(store());
    expect(toolhost('reconcile', ...args, ...where()).status).toBe(2);
  });
});
