// `toolhost call` as a person runs it: the built binary, one call through the
// same supervisor, JSON on stdout, exit 0 / 1 / 2.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_MANIFESTS } from '../../helpers/supervisor-host.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let root: string;
let flags: string[];

function toolhost(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--no-node-snapshot', join(REPO_ROOT, 'bin/toolhost.js'), ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

// The binary runs dist/: refuse to test a build older than the sources it needs.
function assertBuilt(): void {
  const builtMs = statSync(join(REPO_ROOT, 'dist/src/cli/call.js')).mtimeMs;
  const sources = [
    join(REPO_ROOT, 'src/host.ts'),
    join(REPO_ROOT, 'src/cli/call.ts'),
    ...readdirSync(join(REPO_ROOT, 'src/supervisor')).map((name) => join(REPO_ROOT, 'src/supervisor', name)),
  ];
  for (const source of sources) {
    if (statSync(source).mtimeMs > builtMs) throw new Error(`dist/ is older than ${source}: run \`npm run build\` first (npm test does)`);
  }
}

beforeAll(() => {
  assertBuilt();
  root = mkdtempSync(join(tmpdir(), 'toolhost-call-'));
  mkdirSync(join(root, 'ws'));
  writeFileSync(join(root, 'org.yaml'), ['kind: Policy', 'name: cli', 'trust:', `  firstParty: ["${FIXTURE_MANIFESTS}/**"]`, ''].join('\n'));
  flags = ['--manifests', FIXTURE_MANIFESTS, '--policy', join(root, 'org.yaml'), '--workspace', join(root, 'ws'), '--state', join(root, 'state')];
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('toolhost call', () => {
  it('prints the result as JSON and exits 0', () => {
    const result = toolhost('call', 'echo', '{"value":{"a":1}}', ...flags);
    expect(result.status).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } });
  });

  it('prints an error result with its code and exits 1', () => {
    const result = toolhost('call', 'greet', '{}', ...flags);
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ isError: true, code: 'invalid_arguments', details: { path: '/name', keyword: 'required' } });
    expect(result.stderr).toContain('toolhost call: invalid_arguments:');
  });

  it('refuses a call that needs an approval when no terminal can be asked', () => {
    const result = toolhost('call', 'dangerous', '{"target":"x"}', ...flags);
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ code: 'approval_required' });
  });

  it('replays with --idempotency-key', () => {
    const first = toolhost('call', 'counter', '{}', '--idempotency-key', 'cli-1', ...flags);
    const second = toolhost('call', 'counter', '{}', '--idempotency-key', 'cli-1', ...flags);
    expect(first.status).toBe(0);
    expect(second.status).toBe(0);
    expect(JSON.parse(second.stdout).structuredContent).toEqual({ count: 1, note: null });
  });

  it('exits 2 on bad usage', () => {
    const bad = toolhost('call', 'echo', '{not json', ...flags);
    expect(bad.status, bad.stderr).toBe(2);
    const missing = toolhost('call', ...flags);
    expect(missing.status, missing.stderr).toBe(2);
    const help = toolhost('call', '--help');
    expect(help.status, help.stderr).toBe(0);
  });
});
