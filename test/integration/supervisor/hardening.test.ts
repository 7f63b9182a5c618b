// Hostile regressions of issue 13 through real hosts (real isolates, real
// namespaced processes, real pools): a secret a tool read from the workspace
// as an output key and across every cut, a process failure the model cannot
// read, and a read_only tool sending DELETE. What is checked is what a client
// receives: the rendered MCP result.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderErrorResult } from '../../../src/protocol/results.js';
import { BUILT_MAIN, ensureBuilt } from '../../helpers/mcp-clients.js';
import { closeAllHosts, errorOf, resultOf, startHost, waitForNoProcesses, type TestHost, type TestHostOptions } from '../../helpers/supervisor-host.js';
import { recordingLogger } from '../../helpers/recording-logger.js';

const HARDENING = fileURLToPath(new URL('../../fixtures/hardening/manifests', import.meta.url));
const MARKER = `hardening-${randomUUID()}`;
// 44 characters, like a GitHub token.
const TOKEN = `ghp_${randomBytes(20).toString('hex')}`;

afterAll(async () => {
  await closeAllHosts();
  expect(await waitForNoProcesses(MARKER)).toEqual([]);
});

/** A host whose environment names TOKEN a secret, with the token also in the workspace's .env. */
async function leakyHost(policy = '', hostOptions: TestHostOptions['host'] = {}): Promise<TestHost> {
  const host = await startHost({ manifestDirs: [HARDENING], marker: MARKER, env: { DEPLOY_TOKEN: TOKEN }, policy, host: hostOptions });
  writeFileSync(join(host.workspace, '.env'), `DEPLOY_TOKEN=${TOKEN}\n`);
  return host;
}

/** Every piece of the token that is 8 characters or longer found in `text`. */
function tokenPieces(text: string): string[] {
  const found: string[] = [];
  for (let start = 0; start + 8 <= TOKEN.length; start++) {
    const piece = TOKEN.slice(start, start + 8);
    if (text.includes(piece)) found.push(piece);
  }
  return found;
}

/** What the client receives for an error outcome, as JSON text. */
function renderedError(outcome: Awaited<ReturnType<TestHost['call']>>): string {
  return JSON.stringify(renderErrorResult(errorOf(outcome)));
}

describe('secrets in error details (a token as an output key)', () => {
  it.each(['leak_isolate', 'leak_process'])('%s: the invalid_output path names [redacted], never the token', async (tool) => {
    const host = await leakyHost();
    const outcome = await host.call(tool, { how: 'key' });
    const error = errorOf(outcome);
    expect(error.code).toBe('invalid_output');
    expect(error.details).toMatchObject({ reason: 'output_schema', keyword: 'additionalProperties', path: '/[redacted]' });
    expect(tokenPieces(renderedError(outcome))).toEqual([]);
  });
});

describe('redact, then cut (a token placed across every cut)', () => {
  it('the isolate prelude: a thrown message whose token straddles 1000 characters', async () => {
    const host = await leakyHost();
    const outcome = await host.call('leak_isolate', { how: 'throw_across', at: 980 });
    const error = errorOf(outcome);
    expect(error.code).toBe('tool_error');
    expect(error.message.length).toBeLessThanOrEqual(1000);
    expect(tokenPieces(renderedError(outcome))).toEqual([]);
  });

  // A worker's message crosses at up to 8192 characters; the supervisor redacts it whole, then
  // cuts what the caller sees to 1000: a token across 1000 must be gone from the result, the log
  // and the journal's files alike.
  it('a worker tool: a thrown message whose token straddles the 1000 characters the caller sees', async () => {
    const log = recordingLogger('debug');
    const host = await leakyHost('', { logger: log.logger });
    const outcome = await host.call('leak_worker', { how: 'throw_across', at: 980 });
    const error = errorOf(outcome);
    expect(error.code).toBe('tool_error');
    expect(error.message.length).toBeLessThanOrEqual(1000);
    expect(tokenPieces(renderedError(outcome))).toEqual([]);
    await host.close();
    const journal = readdirSync(host.stateDir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'latin1'))
      .join('\n');
    const logged = JSON.stringify(log.lines());
    expect(tokenPieces(logged)).toEqual([]);
    expect(tokenPieces(journal)).toEqual([]);
  });

  it('the persistent pool: an error message whose token straddles 2048 characters', async () => {
    const host = await leakyHost();
    const outcome = await host.call('leak_persistent', { at: 2030 });
    expect(errorOf(outcome).code).toBe('tool_error');
    expect(tokenPieces(renderedError(outcome))).toEqual([]);
  });

  it('the stderr tail: a token that starts before the last 2048 bytes', async () => {
    const host = await leakyHost();
    const outcome = await host.call('leak_process', { how: 'stderr_across', after: 2030 });
    const error = errorOf(outcome);
    expect(error.code).toBe('tool_error');
    expect(error.details['exitCode']).toBe(3);
    expect(String(error.details['stderrTail']).length).toBeLessThanOrEqual(2048);
    expect(tokenPieces(renderedError(outcome))).toEqual([]);
  });
});

describe('the model sees why a process failed', () => {
  it('a non-zero exit carries the redacted stderr tail in the model-visible text', async () => {
    const host = await leakyHost();
    const rendered = renderErrorResult(errorOf(await host.call('leak_process', { how: 'stderr_reason' })));
    const first = rendered.content[0];
    expect(first?.type === 'text' ? first.text : '').toContain('settings.ini has no [main] section');
    expect(rendered._meta?.['toolhost/error']).toMatchObject({ code: 'tool_error', exitCode: 2 });
  });
});

describe('the read_only class holds on the network (ctx.fetch)', () => {
  let server: Server;
  let url: string;
  let fetchManifests: string;
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(request.method ?? '');
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}/things/1`;
    // A bare host admits port 443 only (SPEC 3.2 egress admission): the fixtures get the server's port.
    fetchManifests = mkdtempSync(join(tmpdir(), 'toolhost-hardening-fetch-'));
    for (const file of ['fetch_isolate.yaml', 'fetch_worker.yaml', 'fetch_mutating.yaml', 'fetch_tool.js']) {
      writeFileSync(join(fetchManifests, file), readFileSync(join(HARDENING, file), 'utf8').replace('allow: ["127.0.0.1"]', `allow: ["127.0.0.1:${port}"]`));
    }
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(fetchManifests, { recursive: true, force: true });
  });

  const policy = 'network:\n  allow: ["127.0.0.1"]';
  const leakyHost = (networkPolicy: string): Promise<TestHost> =>
    startHost({ manifestDirs: [fetchManifests], marker: MARKER, env: { DEPLOY_TOKEN: TOKEN }, policy: networkPolicy });

  it.each(['fetch_isolate', 'fetch_worker'])('%s: DELETE is policy_denied naming the class and never reaches the server', async (tool) => {
    const host = await leakyHost(policy);
    seen.length = 0;
    for (const method of ['DELETE', 'POST', 'PUT', 'PATCH']) {
      const value = resultOf(await host.call(tool, { url, method })).structuredContent;
      expect(value).toMatchObject({ refused: 'policy_denied' });
      expect(String(value?.['message'])).toContain('read_only');
    }
    expect(seen).toEqual([]);
    for (const method of ['GET', 'HEAD', 'OPTIONS']) expect(resultOf(await host.call(tool, { url, method })).structuredContent).toEqual({ status: 200 });
    expect(seen).toEqual(['GET', 'HEAD', 'OPTIONS']);
  });

  it('a remote_mutation tool may still send DELETE', async () => {
    const host = await leakyHost(policy);
    seen.length = 0;
    expect(resultOf(await host.call('fetch_mutating', { url, method: 'DELETE' })).structuredContent).toEqual({ status: 200 });
    expect(seen).toEqual(['DELETE']);
  });
});

describe("interpreter resolution is not the workspace's to choose", () => {
  // Each `toolhost call` is a fresh process, so the second resolves the command anew
  // with the .python-version the first call's tool planted in the workspace.
  const toolhost = (root: string, args: Record<string, unknown>): { version: string } => {
    const flags = ['--manifests', HARDENING, '--workspace', join(root, 'ws'), '--state', join(root, 'state')];
    const run = spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'call', 'py_version', JSON.stringify(args), ...flags], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { structuredContent: { version: string } }).structuredContent;
  };

  it('a .python-version written by a tool does not change the Python of later sandboxes', async () => {
    await ensureBuilt();
    const root = mkdtempSync(join(tmpdir(), 'toolhost-pyenv-'));
    try {
      mkdirSync(join(root, 'ws'));
      const first = toolhost(root, {});
      const versions = join(process.env['PYENV_ROOT'] ?? '/root/.pyenv', 'versions');
      // Another installed version than the one running, when pyenv has one; else a name pyenv would refuse.
      const other = (existsSync(versions) ? readdirSync(versions) : []).find((version) => version !== first.version && /^3\.\d+\.\d+$/.test(version)) ?? '3.0.0';
      toolhost(root, { write: other });
      expect(readFileSync(join(root, 'ws', '.python-version'), 'utf8').trim()).toBe(other);
      expect(toolhost(root, {}).version).toBe(first.version);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('sandboxes create nothing on the host', () => {
  it('the first call of a namespaced read_write tool leaves the missing policies/ missing', async () => {
    const host = await leakyHost();
    resultOf(await host.call('py_version', {}));
    expect(existsSync(join(host.workspace, 'policies'))).toBe(false);
  });

  it('a tool that creates the missing policies/ is refused with policy_denied, and what it made is removed', async () => {
    const host = await leakyHost();
    const error = errorOf(await host.call('py_version', { plant: true }));
    expect(error.code).toBe('policy_denied');
    expect(error.details).toMatchObject({ reason: 'protected_path_created', paths: [join(host.workspace, 'policies')] });
    expect(existsSync(join(host.workspace, 'policies'))).toBe(false);
    resultOf(await host.call('py_version', {}));
  });
});
