// The bundled tools run in the sandboxes their manifests declare, through the
// real runners: isolated-vm for isolate tools, Piscina for the worker tool and
// bubblewrap for the Python tools (one-shot and the persistent NDJSON pool).
// This proves the tools keep to the contracts the runners implement.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { loadHostConfig, type HostConfig } from '../../../src/host-config.js';
import { createRunner } from '../../../src/runner/index.js';
import type { RunOutcome } from '../../../src/runner/run-types.js';
import { waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';
import { runOptions } from '../../helpers/run-options.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

const MARKER = `toolhost-bundled-sandbox-${randomUUID()}`;
let workspace = '';
let tools: HostConfig['tools'] = new Map();

beforeAll(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-bundled-')));
  writeFileSync(join(workspace, 'a.txt'), 'hello world\nsecond line\n');
  mkdirSync(join(workspace, 'sub'));
  // What the host would hand each runner (policy/views.ts builds the RunSpec) under a policy that
  // trusts the bundled tools and allows http_get's host; each test then narrows the network itself.
  const policyFile = join(workspace, '..', `${basename(workspace)}.policy.yaml`);
  writeFileSync(policyFile, `kind: Policy\nname: bundled-tools\ntrust:\n  firstParty: ["${realpathSync('manifests')}/**"]\nnetwork:\n  allow: ["api.github.com"]\n`);
  const config = loadHostConfig({ manifestDirs: ['manifests'], policyFiles: [policyFile], workspace, env: {} });
  rmSync(policyFile);
  expect([...config.problems, ...config.exclusions]).toEqual([]);
  tools = config.tools;
});

afterAll(async () => {
  rmSync(workspace, { recursive: true, force: true });
  expect(await waitForNoMarkedProcesses(MARKER)).toEqual([]);
});

async function call(name: string, args: Record<string, unknown>, networkAllow?: readonly string[]): Promise<RunOutcome> {
  const view = tools.get(name);
  if (!view?.runSpec) throw new Error(`no bundled tool ${name}`);
  // The host's PATH (python3) and the marker every process carries, for the /proc scan.
  const env = { ...view.runSpec.env, PATH: process.env['PATH'] ?? '/usr/bin:/bin', TOOLHOST_TEST_MARKER: MARKER };
  const runner = createRunner({ ...view.runSpec, env, ...(networkAllow ? { networkAllow } : {}) }, { logger: createSilentLogger(), services });
  try {
    return await runner.run({ callId: randomUUID(), args }, runOptions({ timeoutMs: view.limits.timeoutMs }));
  } finally {
    await runner.close();
  }
}

function valueOf(outcome: RunOutcome): unknown {
  if (!outcome.ok) throw new Error(`${outcome.code}: ${outcome.message} ${JSON.stringify(outcome.details)}`);
  if (outcome.output.type !== 'json') throw new Error('expected a JSON result');
  return JSON.parse(outcome.output.json);
}

describe('bundled tools in their sandboxes', { timeout: 180_000 }, () => {
  it('read_file, list_dir and search_text run in an isolate', async () => {
    expect(valueOf(await call('read_file', { path: 'a.txt', startLine: 2 }))).toEqual({
      path: 'a.txt',
      text: 'second line',
      startLine: 2,
      endLine: 2,
      totalLines: 2,
      truncated: false,
    });
    expect(valueOf(await call('list_dir', {}))).toEqual({
      path: '.',
      entries: [
        { path: 'a.txt', type: 'file', size: 24 },
        { path: 'sub', type: 'directory', size: 0 },
      ],
      truncated: false,
    });
    expect(valueOf(await call('search_text', { query: 'SECOND', caseSensitive: false }))).toEqual({
      matches: [{ path: 'a.txt', line: 2, column: 1, text: 'second line' }],
      filesSearched: 1,
      truncated: false,
    });
  });

  it('write_file writes through ctx.fs in an isolate, and cannot leave the workspace', async () => {
    expect(valueOf(await call('write_file', { path: 'sub/new.txt', text: 'é' }))).toEqual({ path: 'sub/new.txt', bytes: 2, created: true });
    expect(readFileSync(join(workspace, 'sub/new.txt'), 'utf8')).toBe('é');
    const escaped = await call('write_file', { path: '../escaped.txt', text: 'x' });
    expect(escaped).toMatchObject({ ok: false, code: 'tool_error', details: { errorCode: 'policy_denied' } });
    expect(existsSync(join(workspace, '..', 'escaped.txt'))).toBe(false);
  });

  it('json_format (community) runs in an isolate', async () => {
    expect(valueOf(await call('json_format', { json: '{"b":1,"a":2}', sortKeys: true, indent: 0 }))).toEqual({ formatted: '{"a":2,"b":1}' });
  });

  it('http_get fetches through ctx.fetch in an isolate, only from allowed hosts', async () => {
    const server = createServer((request, response) => {
      response.setHeader('content-type', 'application/json; charset=utf-8');
      response.end(JSON.stringify({ path: request.url }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
      // The manifest allows api.github.com; a loopback server stands in for it here.
      expect(valueOf(await call('http_get', { url: `http://${host}/repos/a/b` }, [host]))).toEqual({
        status: 200,
        contentType: 'application/json; charset=utf-8',
        body: '{"path":"/repos/a/b"}',
        truncated: false,
      });
      expect(await call('http_get', { url: `http://${host}/` })).toMatchObject({ ok: false, code: 'tool_error', details: { errorCode: 'policy_denied' } });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('hash_file runs in an isolate', async () => {
    expect(valueOf(await call('hash_file', { path: 'a.txt' }))).toMatchObject({ algorithm: 'sha256', bytes: 24, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('text_stats answers from its persistent pool inside bubblewrap', async () => {
    expect(valueOf(await call('text_stats', { path: 'a.txt' }))).toEqual({ path: 'a.txt', lines: 2, words: 4, chars: 24, bytes: 24 });
  });

  it('delete_path deletes inside bubblewrap and refuses the workspace root', async () => {
    writeFileSync(join(workspace, 'sub/doomed.txt'), 'x');
    expect(valueOf(await call('delete_path', { path: 'sub/doomed.txt' }))).toEqual({ path: 'sub/doomed.txt', type: 'file' });
    expect(existsSync(join(workspace, 'sub/doomed.txt'))).toBe(false);
    const root = await call('delete_path', { path: '.', recursive: true });
    expect(root).toMatchObject({ ok: false, code: 'tool_error', details: { exitCode: 1 } });
    expect(existsSync(join(workspace, 'a.txt'))).toBe(true);
  });
});
