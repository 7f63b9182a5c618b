// Hostile regressions of issue 13 through real hosts (real isolates, real
// namespaced processes, real pools): a secret a tool read from the workspace
// as an output key and across every cut, a process failure the model cannot
// read, and a read_only tool sending DELETE. What is checked is what a client
// receives: the rendered MCP result.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderErrorResult } from '../../../src/protocol/results.js';
import { closeAllHosts, errorOf, resultOf, startHost, waitForNoProcesses, type TestHost } from './harness.js';

const HARDENING = fileURLToPath(new URL('../../fixtures/hardening/manifests', import.meta.url));
const MARKER = `hardening-${randomUUID()}`;
// 44 characters, like a GitHub token.
const TOKEN = `ghp_${randomBytes(20).toString('hex')}`;

afterAll(async () => {
  await closeAllHosts();
  expect(await waitForNoProcesses(MARKER)).toEqual([]);
});

/** A host whose environment names TOKEN a secret, with the token also in the workspace's .env. */
async function leakyHost(policy = ''): Promise<TestHost> {
  const host = await startHost({ manifestDirs: [HARDENING], marker: MARKER, env: { DEPLOY_TOKEN: TOKEN }, policy });
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
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(request.method ?? '');
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/things/1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const policy = 'network:\n  allow: ["127.0.0.1"]';

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
