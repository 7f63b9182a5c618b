// `toolhost import` (SPEC section 2.1) with the real everything server: the
// built CLI starts it in the sandbox and writes a kind: Server manifest whose
// entries are suggestions marked unverified; the manifest then loads.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  it('refuses a bad name or a missing command as usage errors', () => {
    expect(toolhost(['import', 'Bad_Name', '--', 'node', './everything.mjs']).status).toBe(2);
    expect(toolhost(['import', 'ev']).status).toBe(2);
  });
});
