// CLI commands start an upstream server only when they need its tools: `call`
// and `explain` of a manifest tool start none, of a server's tool only that
// server. The fixture folder holds `late`, a server that never completes its
// handshake here (no signal file) within a startupTimeoutMs of 60 s, longer than
// these tests may run: a command that started every server would not finish.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuiltCli } from '../../helpers/cli-runs.js';
import { ensureBuilt } from '../../helpers/mcp-clients.js';
import { newMarker, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';

const FIXTURES = fileURLToPath(new URL('../../e2e/fixtures/fast-start', import.meta.url));
const MARKER = newMarker('lazy');
let root: string;

function toolhost(...args: string[]) {
  return runBuiltCli(args, { marker: MARKER, flags: ['--manifests', FIXTURES, '--workspace', join(root, 'ws'), '--state', join(root, 'state')] });
}

beforeAll(async () => {
  await ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'toolhost-lazy-'));
  await execa('mkdir', ['-p', join(root, 'ws')]);
}, 300_000);
afterAll(async () => {
  expect(await waitForNoMarkedProcesses(MARKER)).toEqual([]);
  rmSync(root, { recursive: true, force: true });
});

describe('servers started only when needed', () => {
  it('call of a manifest tool starts no server', async () => {
    const result = await toolhost('call', 'hello', '{"text":"hi"}');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ structuredContent: { echo: { text: 'hi' } } });
  }, 45_000);

  it('explain of a manifest tool starts no server', async () => {
    const result = await toolhost('explain', 'hello', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'hello', decision: 'allow' });
  }, 45_000);

  it("call and explain of a server's tool start that server only", async () => {
    const called = await toolhost('call', 'quick__echo', '{"text":"x"}');
    expect(called.code).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({ content: [{ type: 'text', text: 'echo: x' }] });
    const explained = await toolhost('explain', 'quick__echo', '--json');
    expect(explained.code).toBe(0);
    expect(JSON.parse(explained.stdout)).toMatchObject({ name: 'quick__echo', sideEffect: 'read_only' });
  }, 45_000);
});
