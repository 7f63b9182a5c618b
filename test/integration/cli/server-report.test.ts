// validate and list with upstream servers (SPEC section 2.1): each server is
// started to read its tools; every tool is reported with its listed name,
// class, tools: entry and the server's hints (unverified); a server that cannot
// start is a load problem naming its manifest (validate exits 1).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from '../../helpers/mcp-clients.js';

const root = mkdtempSync(join(tmpdir(), 'toolhost-server-report-'));
const policy = join(root, 'policy.yaml');

beforeAll(async () => {
  await ensureBuilt();
  writeFileSync(policy, 'kind: Policy\nname: servers\nlimits:\n  maxMemoryMb: 2048\n');
}, 300_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function toolhost(args: readonly string[]) {
  return spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, ...args, '--policy', policy, '--workspace', root], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
}

describe('validate and list with upstream servers', () => {
  it('validate reports each upstream tool with its class and entry, hints unverified, and exclusions', () => {
    const run = toolhost(['validate', '--manifests', 'test/e2e/fixtures/upstream']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^ {2}fs__read_text_file {2}read_only \(tools: "read_text_file"\); server hints \(unverified\): \{"readOnlyHint":true/m);
    expect(run.stdout).toMatch(/^ {2}\(move_file\) {2}excluded: hidden by its tools: entry/m);
    expect(run.stdout).toMatch(/^ {2}fs__get_file_info {2}unclassified \(tools: "get_file_info"\)/m);
  });

  it('validate fails naming the manifest of a server that does not start', () => {
    const run = toolhost(['validate', '--manifests', 'test/fixtures/servers']);
    expect(run.status).toBe(1);
    // Outside the workspace and with no toolhost.yaml, a manifest is named by its absolute path.
    expect(run.stderr).toMatch(/^\/\S*\/test\/fixtures\/servers\/never-starts\.yaml:1:1: server "neverstarts" is not available: .*within 1500 ms/m);
    expect(run.stderr).toMatch(/^\/\S*\/test\/fixtures\/servers\/exits\.yaml:1:1: server "exits" is not available/m);
  });

  it('validate and list print the last lines of the stderr of a server that exits at start', () => {
    for (const command of ['validate', 'list']) {
      const run = toolhost([command, '--manifests', 'test/fixtures/servers']);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(
        'test/fixtures/servers/exits.yaml:1:1: server "exits" is not available: the server did not start: it exited during start-up (exit code 3); the last lines of its stderr:\n    hostile server: refusing to start\n',
      );
    }
  });

  it('validate fails for every upstream tool that is not offered, at its tools: entry, unless the entry hides it', () => {
    const run = toolhost(['validate', '--manifests', 'test/fixtures/servers']);
    expect(run.status).toBe(1);
    const excluded = run.stderr.split('\n').filter((line) => line.includes('test/fixtures/servers/lying-list.yaml:14:3: server "lyinglist": tool '));
    expect(excluded.map((line) => /tool "([^"]+)"/.exec(line)?.[1])).toEqual(['external_ref', 'too_deep', 'a-b', 'a_b', 'x'.repeat(80)]);
    // fs hides move_file and the rest with hidden: true: validate passes (the first test above).
  });

  it('list and explain say when a read_only class is declared, not enforced (instances: one)', () => {
    const run = toolhost(['list', '--json', '--manifests', 'test/fixtures/upstream-state']);
    expect(run.status, run.stderr).toBe(0);
    const tools = new Map((JSON.parse(run.stdout) as Array<Record<string, any>>).map((tool) => [tool['name'], tool['upstream']]));
    expect(tools.get('varsone__get_var')).toMatchObject({ instances: 'one', readOnlyEnforced: false });
    expect(tools.get('varsone__set_var')).toMatchObject({ instances: 'one', readOnlyEnforced: null });
    expect(tools.get('varssplit__get_var')).toMatchObject({ instances: 'split', readOnlyEnforced: true });
    const table = toolhost(['list', '--manifests', 'test/fixtures/upstream-state']);
    expect(table.stdout).toMatch(/^varsone__get_var\tread_only \(declared, not enforced: instances: one\)\t/m);
    expect(table.stdout).toMatch(/^varssplit__get_var\tread_only\t/m);
    const explained = toolhost(['explain', 'varsone__get_var', '--manifests', 'test/fixtures/upstream-state']);
    expect(explained.stdout).toContain('the read_only class is declared, not enforced by the operating system');
  });

  it("list --json carries each upstream tool's server, tool, entry and hints", () => {
    const run = toolhost(['list', '--json', '--manifests', 'test/e2e/fixtures/upstream']);
    expect(run.status, run.stderr).toBe(0);
    const tools = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(tools.find((tool) => tool['name'] === 'ev__get_sum')).toMatchObject({
      sideEffect: null,
      listed: false,
      code: 'unclassified_tool',
      upstream: { server: 'ev', tool: 'get-sum', entry: 'get-sum', hints: { readOnlyHint: true } },
    });
    expect(tools.find((tool) => tool['name'] === 'fs__write_file')).toMatchObject({
      sideEffect: 'local_mutation',
      mode: 'process',
      isolation: 'namespace',
      upstream: { server: 'fs', tool: 'write_file' },
    });
  });
});
