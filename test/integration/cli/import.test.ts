// `toolhost import` (SPEC section 2.1) with the real everything server: the
// built CLI starts it in the sandbox and writes a kind: Server manifest whose
// entries are suggestions marked unverified; the manifest then loads.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from '../../helpers/mcp-clients.js';
import { loadManifests } from '../../../src/registry/load-manifests.js';

// Inside the repository, so Node finds the server package in its node_modules.
const WORK = join(REPO_ROOT, 'test/fixtures', `import-work-${randomUUID()}`);

beforeAll(async () => {
  await ensureBuilt();
  mkdirSync(WORK, { recursive: true });
  copyFileSync(join(REPO_ROOT, 'test/e2e/fixtures/upstream/everything.mjs'), join(WORK, 'everything.mjs'));
}, 300_000);
afterAll(() => rmSync(WORK, { recursive: true, force: true }));

function toolhost(args: readonly string[]) {
  return spawnSync(process.execPath, [BUILT_MAIN, ...args], { cwd: WORK, encoding: 'utf8', timeout: 60_000 });
}

describe('toolhost import', () => {
  it('writes a manifest with an entry per tool, classes suggested and marked unverified', () => {
    const run = toolhost(['import', 'ev', '--out', join(WORK, 'ev.yaml'), '--', 'node', './everything.mjs']);
    expect(run.status, run.stderr).toBe(0);
    const text = readFileSync(join(WORK, 'ev.yaml'), 'utf8');
    expect(text).toMatch(/^ {2}"echo": \{ sideEffect: read_only \} {2}# unverified: suggested from the server's hints/m);
    expect(text).toMatch(/^ {2}"toggle-simulated-logging": \{ sideEffect: local_mutation \}/m);
    expect(text).toMatch(/^ {2}"\*": \{ hidden: true \}/m);
    // Tools of both kinds: the key is written, with which to choose for a server that keeps state in memory.
    expect(text).toMatch(/^instances: split$/m);
    expect(text).toMatch(/^# A server that keeps state in memory between calls .*\n# .* needs one/m);
    const loaded = loadManifests({ dirs: [WORK], workspace: WORK, cwd: WORK });
    expect(loaded.problems).toEqual([]);
    const entries = loaded.servers[0]?.tools.map((entry) => entry.pattern) ?? [];
    expect(entries).toEqual(expect.arrayContaining(['echo', 'get-tiny-image', 'trigger-long-running-operation', '*']));
  });

  it('never overwrites a file, and a command that is no MCP server is a clear failure', () => {
    writeFileSync(join(WORK, 'taken.yaml'), 'x: 1\n');
    expect(toolhost(['import', 'ev', '--out', join(WORK, 'taken.yaml'), '--', 'node', './everything.mjs']).status).toBe(1);
    const notMcp = toolhost(['import', 'bad', '--out', join(WORK, 'bad.yaml'), '--startup-timeout-ms', '3000', '--', 'true']);
    expect(notMcp.status).toBe(1);
    expect(notMcp.stderr).toMatch(/did not start/);
  });

  it('prints the last lines of the stderr of a server that exits at start', () => {
    copyFileSync(join(REPO_ROOT, 'test/fixtures/servers/hostile.mjs'), join(WORK, 'hostile.mjs'));
    const run = toolhost(['import', 'exits', '--out', join(WORK, 'exits.yaml'), '--', 'node', './hostile.mjs', 'exits']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      'toolhost import: the server did not start: it exited during start-up (exit code 3); the last lines of its stderr:\n    hostile server: refusing to start\n',
    );
  });

  it('warns when the server was refused a write beside its own code, and says how to point it into the workspace', () => {
    copyFileSync(join(REPO_ROOT, 'test/fixtures/import-servers/writes-beside.mjs'), join(WORK, 'writes-beside.mjs'));
    const run = toolhost(['import', 'beside', '--out', join(WORK, 'beside.yaml'), '--', 'node', './writes-beside.mjs']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /^toolhost import: warning: the server tried to write beside its own code \(EROFS\).*sandbox\.env: \{ MEMORY_FILE_PATH: "\$\{WORKSPACE\}\/\.memory\.jsonl" \}/m,
    );
    // Nothing was written there: the folder is read-only in the sandbox.
    expect(existsSync(join(WORK, 'data.jsonl'))).toBe(false);
  });

  it('warns when the command downloads its package at start (npx -y): the sandbox has no network', () => {
    // A package this checkout does not have: npx would have to download it (a dev dependency would be found in the repository's node_modules and start).
    const run = toolhost(['import', 'mem', '--out', join(WORK, 'mem.yaml'), '--startup-timeout-ms', '5000', '--', 'npx', '-y', '@modelcontextprotocol/server-sequential-thinking']);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^toolhost import: warning: "npx -y …" downloads its package when it starts, and the sandbox has no network/m);
    expect(existsSync(join(WORK, 'mem.yaml'))).toBe(false);
  });

  it('refuses a bad name or a missing command as usage errors', () => {
    expect(toolhost(['import', 'Bad_Name', '--', 'node', './everything.mjs']).status).toBe(2);
    expect(toolhost(['import', 'ev']).status).toBe(2);
  });
});
