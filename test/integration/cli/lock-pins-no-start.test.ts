// With a lock and pinning in force, `validate`, `list` and `explain` take a
// server's tools from the pins and start no server (SPEC section 4.2). The
// proof: after `toolhost lock`, the server is made to exit at start-up; with
// the lock the commands still succeed and show its tools, without it they fail.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuiltCli } from '../../helpers/cli-runs.js';
import { ensureBuilt } from '../../helpers/mcp-clients.js';
import { newMarker, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';

const FIXTURES = fileURLToPath(new URL('../../e2e/fixtures/fast-start', import.meta.url));
const MARKER = newMarker('pins');
let root: string;

function toolhost(...args: string[]) {
  return runBuiltCli(args, { marker: MARKER, flags: ['--manifests', join(root, 'manifests'), '--workspace', join(root, 'ws'), '--state', join(root, 'state')] });
}

beforeAll(async () => {
  await ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'toolhost-pins-'));
  mkdirSync(join(root, 'manifests'));
  mkdirSync(join(root, 'ws'));
  for (const file of ['hello.yaml', 'hello.js', 'quick.yaml', 'slow-server.mjs']) copyFileSync(join(FIXTURES, file), join(root, 'manifests', file));
  const locked = await toolhost('lock');
  expect(locked.stderr).toBe('');
  expect(locked.code).toBe(0);
  // From here on the server exits during start-up: only the pins can list its tools.
  const manifest = join(root, 'manifests', 'quick.yaml');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"open"', '"exits"'));
}, 300_000);
afterAll(async () => {
  expect(await waitForNoMarkedProcesses(MARKER)).toEqual([]);
  rmSync(root, { recursive: true, force: true });
});

describe('validate, list and explain answer from the pins', () => {
  it('validate passes and reports the pinned tools', async () => {
    const result = await toolhost('validate');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('quick__echo');
    expect(result.stdout).toContain('ok: 5 tools (5 listed)');
  }, 45_000);

  it("list and explain show the server's tools as pinned", async () => {
    const listed = await toolhost('list', '--json');
    expect(listed.code).toBe(0);
    const names = (JSON.parse(listed.stdout) as { name: string; listed: boolean }[]).filter((tool) => tool.listed).map((tool) => tool.name);
    expect(names).toEqual(['hello', 'quick__echo', 'quick__exit_now', 'quick__fail', 'quick__ping_back']);
    const explained = await toolhost('explain', 'quick__echo', '--json');
    expect(explained.code).toBe(0);
    expect(JSON.parse(explained.stdout)).toMatchObject({ name: 'quick__echo', sideEffect: 'read_only', listed: true });
  }, 45_000);

  it('without the lock the server is started, and its failure is a problem', async () => {
    const lock = join(root, 'ws', 'toolhost.lock');
    const saved = readFileSync(lock);
    rmSync(lock);
    try {
      const result = await toolhost('validate');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('server "quick" is not available');
    } finally {
      writeFileSync(lock, saved);
    }
  }, 45_000);
});
