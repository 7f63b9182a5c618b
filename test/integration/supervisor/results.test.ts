// Run and result checks (SPEC section 5 steps 8-10): timeout, invalid output
// (duplicate keys, depth, a 100,000-deep document), output schema, redaction
// of secrets, paths and stack traces, the byte limit with its artifact, and
// progress and lifecycle events.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { LifecycleEvent } from '../../../src/supervisor/types.js';
import type { ProgressEvent } from '../../../src/runner/run-types.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { closeAllHosts, errorOf, resultOf, startHost, textOf, waitForNoProcesses } from '../../helpers/supervisor-host.js';

const MARKER = `results-${randomUUID()}`;

afterAll(async () => {
  await closeAllHosts();
  expect(await waitForNoProcesses(MARKER)).toEqual([]);
});

describe('run', () => {
  it('stops a tool at its timeout with timeout, and the next call works', async () => {
    const host = await startHost();
    const error = errorOf(await host.call('spin', {}));
    expect(error.code).toBe('timeout');
    expect(textOf(await host.call('echo', { value: 'after' }))).toBe('after');
  });

  it('answers cancelled when the request is cancelled mid-run', async () => {
    const host = await startHost();
    const controller = new AbortController();
    const events: LifecycleEvent[] = [];
    const call = host.call(
      'spin',
      {},
      {
        control: new CallControl([controller.signal]),
        onEvent: (event) => {
          events.push(event);
          if (event.type === 'tool.started') controller.abort();
        },
      },
    );
    expect(errorOf(await call).code).toBe('cancelled');
    expect(events.map((event) => event.type)).toEqual(['tool.started']);
  });

  it('reports a tool error as tool_error with the message redacted', async () => {
    const host = await startHost({ env: { DEPLOY_TOKEN: 'tok-9f8e7d6c5b4a' } });
    const error = errorOf(await host.call('fail', { message: 'cannot use tok-9f8e7d6c5b4a on /root/.ssh/id_rsa' }));
    expect(error.code).toBe('tool_error');
    expect(error.message).not.toContain('tok-9f8e7d6c5b4a');
    expect(error.message).not.toContain('/root/.ssh');
    expect(error.message).toContain('[redacted]');
  });

  it('forwards progress and sends tool.started then tool.completed', async () => {
    const host = await startHost();
    const progress: ProgressEvent[] = [];
    const events: LifecycleEvent[] = [];
    const outcome = resultOf(await host.call('progress', {}, { onProgress: (event) => progress.push(event), onEvent: (event) => events.push(event) }));
    expect(progress).toEqual([
      { progress: 1, total: 2, message: 'half way' },
      { progress: 2, total: 2, message: 'done' },
    ]);
    expect(events.map((event) => [event.type, event.callId, event.tool])).toEqual([
      ['tool.started', outcome.callId, 'progress'],
      ['tool.completed', outcome.callId, 'progress'],
    ]);
  });

  it('sends tool.failed with the code when the run fails', async () => {
    const host = await startHost();
    const events: LifecycleEvent[] = [];
    await host.call('fail', { message: 'no' }, { onEvent: (event) => events.push(event) });
    expect(events.map((event) => [event.type, event.code])).toEqual([
      ['tool.started', undefined],
      ['tool.failed', 'tool_error'],
    ]);
  });
});

describe('result checks', () => {
  it.each([
    ['duplicate_keys', { reason: 'duplicate_key' }],
    ['deep_300', { reason: 'too_deep' }],
    ['deep_100000', { reason: 'too_deep' }],
  ])('refuses %s output with invalid_output, and the host carries on', async (kind, details) => {
    const host = await startHost({ marker: MARKER });
    const error = errorOf(await host.call('emit', { kind }));
    expect(error.code).toBe('invalid_output');
    expect(error.details).toMatchObject(details);
    const ok = resultOf(await host.call('emit', { kind: 'ok', text: 'fine' }));
    expect(ok.structuredContent).toEqual({ ok: true, text: 'fine' });
  });

  it('checks the output schema: a violation is invalid_output naming the path', async () => {
    const host = await startHost();
    const error = errorOf(await host.call('typed', { value: { ok: 'yes' } }));
    expect(error.code).toBe('invalid_output');
    expect(error.details).toMatchObject({ reason: 'output_schema', path: '/ok', keyword: 'type', expected: { type: 'boolean' } });
    expect(resultOf(await host.call('typed', { value: { ok: true } })).structuredContent).toEqual({ ok: true });
    expect(errorOf(await host.call('typed', { value: 'text' })).code).toBe('invalid_output');
  });

  it('shapes an object as structuredContent plus its JSON text, other values as text', async () => {
    const host = await startHost();
    const object = resultOf(await host.call('echo', { value: { a: [1, 'b'] } }));
    expect(object.structuredContent).toEqual({ a: [1, 'b'] });
    expect(object.content).toEqual([{ type: 'text', text: '{"a":[1,"b"]}' }]);
    const array = resultOf(await host.call('echo', { value: [1, 2] }));
    expect(array.structuredContent).toBeUndefined();
    expect(array.content).toEqual([{ type: 'text', text: '[1,2]' }]);
  });
});

describe('redaction', () => {
  const env = { SERVICE_API_TOKEN: 'tok-abcdef-123456', DB_PASSWORD: 'pa55-w0rd-xyz' };

  it('replaces secret values in text and in every string and key of JSON', async () => {
    const host = await startHost({ env });
    expect(textOf(await host.call('echo', { value: 'my token is tok-abcdef-123456!' }))).toBe('my token is [redacted]!');
    const outcome = resultOf(await host.call('echo', { value: { 'pa55-w0rd-xyz': ['tok-abcdef-123456', 1] } }));
    expect(outcome.structuredContent).toEqual({ '[redacted]': ['[redacted]', 1] });
    expect(JSON.stringify(outcome)).not.toMatch(/tok-abcdef|pa55-w0rd/);
  });

  it('hides host paths outside the workspace and stack traces, keeps workspace paths', async () => {
    const host = await startHost();
    const inside = `${host.workspace}/notes/a.txt`;
    const text = `see ${inside} and /etc/passwd\nError: x\n    at f (/opt/app/x.js:1:2)\n    at g (/opt/app/y.js:3:4)`;
    const shown = textOf(await host.call('echo', { value: text }));
    expect(shown).toContain(inside);
    expect(shown).not.toContain('/etc/passwd');
    expect(shown).not.toContain('/opt/app');
  });

  it('redacts the stderr tail of a failed process tool', async () => {
    const host = await startHost({ env, marker: MARKER });
    const error = errorOf(await host.call('emit', { kind: 'error_with_secret', text: 'tok-abcdef-123456' }));
    expect(error.code).toBe('tool_error');
    const visible = JSON.stringify({ message: error.message, details: error.details });
    expect(visible).not.toContain('tok-abcdef-123456');
    expect(visible).not.toContain('/etc/passwd');
  });
});

describe('byte limit', () => {
  it('spills a large text result to an artifact: preview within the limit on a character boundary, a link, the full bytes readable', async () => {
    const host = await startHost();
    const value = 'é€'.repeat(500); // 2,500 bytes > maxResultBytes 2000
    const outcome = resultOf(await host.call('echo', { value }));
    expect(outcome.structuredContent).toBeUndefined();
    const [preview, link] = outcome.content;
    if (preview?.type !== 'text' || link?.type !== 'resource_link') throw new Error('expected a preview and a link');
    expect(Buffer.byteLength(preview.text)).toBeLessThanOrEqual(2000);
    expect(Buffer.byteLength(preview.text)).toBeGreaterThan(1995);
    expect(value.startsWith(preview.text)).toBe(true);
    expect(link.uri).toMatch(/^toolhost:\/\/artifacts\/[0-9a-f]{64}$/);
    expect(link).toMatchObject({ mimeType: 'text/plain; charset=utf-8', size: Buffer.byteLength(value) });
    const artifact = await host.supervisor.readArtifact(link.uri);
    expect(artifact?.mimeType).toBe('text/plain; charset=utf-8');
    expect(Buffer.from(artifact?.bytes ?? []).toString('utf8')).toBe(value);
  });

  it('spills a large object as application/json without structuredContent', async () => {
    const host = await startHost();
    const value = { text: 'x'.repeat(2500) };
    const outcome = resultOf(await host.call('echo', { value }));
    expect(outcome.structuredContent).toBeUndefined();
    const link = outcome.content[1];
    if (link?.type !== 'resource_link') throw new Error('expected a link');
    expect(link.mimeType).toBe('application/json');
    const artifact = await host.supervisor.readArtifact(link.uri);
    expect(JSON.parse(Buffer.from(artifact?.bytes ?? []).toString('utf8'))).toEqual(value);
  });

  it('stores the redacted payload, never the secret', async () => {
    const host = await startHost({ env: { GH_TOKEN: 'ghp-secret-token-value' } });
    const outcome = resultOf(await host.call('echo', { value: `ghp-secret-token-value ${'y'.repeat(2500)}` }));
    const link = outcome.content[1];
    if (link?.type !== 'resource_link') throw new Error('expected a link');
    const text = Buffer.from((await host.supervisor.readArtifact(link.uri))?.bytes ?? []).toString('utf8');
    expect(text.startsWith('[redacted] yyy')).toBe(true);
  });

  it('returns undefined for an unknown artifact', async () => {
    const host = await startHost();
    expect(await host.supervisor.readArtifact(`toolhost://artifacts/${'0'.repeat(64)}`)).toBeUndefined();
    expect(await host.supervisor.readArtifact('toolhost://artifacts/../../etc/passwd')).toBeUndefined();
  });
});
