// `toolhost call` writes to the journal the user chose (SPEC 7.1): `--journal URL`
// and, without the flag, TOOLHOST_JOURNAL; the flag wins over the variable. The
// record is then found by `toolhost audit --journal` on that store, and nothing
// is written to the state folder's default journal.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { AuditJsonRecord } from '../../../src/audit/audit-format.js';
import { FIXTURE_MANIFESTS } from '../../helpers/supervisor-host.js';
import { describeEachStore } from '../../helpers/journal-stores.js';
import { assertJournalBuilt, REPO_ROOT } from '../../helpers/journal-processes.js';

function toolhost(args: readonly string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  // The parent's own TOOLHOST_JOURNAL (if any) must not choose the store for these children.
  const { TOOLHOST_JOURNAL: _ignored, ...inherited } = process.env;
  const result = spawnSync(process.execPath, ['--no-node-snapshot', `${REPO_ROOT}bin/toolhost.js`, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...inherited, ...env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => assertJournalBuilt());

describeEachStore('toolhost call: the journal chosen by --journal or TOOLHOST_JOURNAL', (store) => {
  /** Host flags in a fresh folder beside the store's state folder; the state folder itself is never the store. */
  function hostFlags(): string[] {
    const root = join(store().stateDir, '..', 'call-host');
    mkdirSync(join(root, 'ws'), { recursive: true });
    writeFileSync(join(root, 'org.yaml'), ['kind: Policy', 'name: cli', 'trust:', `  firstParty: ["${FIXTURE_MANIFESTS}/**"]`, ''].join('\n'));
    return ['--manifests', FIXTURE_MANIFESTS, '--policy', join(root, 'org.yaml'), '--workspace', join(root, 'ws'), '--state', join(root, 'state')];
  }
  const defaultJournalOf = (flags: string[]): string => join(flags[flags.indexOf('--state') + 1]!, 'journal.sqlite');

  function auditedEchoes(url: string): AuditJsonRecord[] {
    const result = toolhost(['audit', '--state', store().stateDir, '--journal', url, '--json', '--tool', 'echo']);
    expect(result.status, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as AuditJsonRecord[];
  }

  it('--journal URL: the call is recorded in that store, not in the state folder', () => {
    const flags = hostFlags();
    const call = toolhost(['call', 'echo', '{"value":"by-flag"}', ...flags, '--journal', store().url]);
    expect(call.status, call.stderr).toBe(0);
    const records = auditedEchoes(store().url);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ tool: 'echo', status: 'completed' });
    expect(existsSync(defaultJournalOf(flags))).toBe(false);
  });

  it('TOOLHOST_JOURNAL: without --journal the call is recorded in the store the variable names', () => {
    const flags = hostFlags();
    const call = toolhost(['call', 'echo', '{"value":"by-env"}', ...flags], { TOOLHOST_JOURNAL: store().url });
    expect(call.status, call.stderr).toBe(0);
    const records = auditedEchoes(store().url);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ tool: 'echo', status: 'completed' });
    expect(existsSync(defaultJournalOf(flags))).toBe(false);
    // `audit` honours the variable too.
    const audited = toolhost(['audit', '--state', store().stateDir, '--json', '--tool', 'echo'], { TOOLHOST_JOURNAL: store().url });
    expect(audited.status, audited.stderr).toBe(0);
    expect((JSON.parse(audited.stdout) as AuditJsonRecord[]).map((record) => record.id)).toEqual([records[0]!.id]);
  });

  it('--journal wins over TOOLHOST_JOURNAL', () => {
    const flags = hostFlags();
    const other = `sqlite:${join(store().stateDir, '..', 'other-journal.sqlite')}`;
    const call = toolhost(['call', 'echo', '{"value":"both"}', ...flags, '--journal', store().url], { TOOLHOST_JOURNAL: other });
    expect(call.status, call.stderr).toBe(0);
    expect(auditedEchoes(store().url)).toHaveLength(1);
    expect(existsSync(join(store().stateDir, '..', 'other-journal.sqlite'))).toBe(false);
    expect(existsSync(defaultJournalOf(flags))).toBe(false);
  });
});
