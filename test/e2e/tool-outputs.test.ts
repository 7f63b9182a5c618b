// Tool outputs, recovery, terminal tools and failure runs (SPEC 5.1, 5.2) end to
// end: the built host over real stdio, driven by the SDK v1 client and the v2
// client in both eras. Every part type reaches the client as the MCP block it
// is (the v1 client validates each against its schemas), from isolate, worker,
// one-shot (`stdout: output`) and persistent process tools; each refusal fails
// closed with its reason; model_error and host_only look as SPEC 5.1 says; a
// terminal tool ends the session's run; a failure run stops it and a success
// resets it; and every session counter survives a reload (SIGHUP).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradientPng } from '../../scripts/demo/png.mjs';
import { CLIENT_KINDS, ensureBuilt, REPO_ROOT, type ClientKind } from '../helpers/mcp-clients.js';
import { makeHostDirs, startClient, stopClient, until, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

beforeAll(() => ensureBuilt(), 300_000);

const OUTPUTS = join(REPO_ROOT, 'test/e2e/fixtures/outputs');
const PNG = gradientPng(24, 16) as Buffer;
const PNG_BASE64 = PNG.toString('base64');
const WAV_BASE64 = wav(Array.from({ length: 800 }, (_, i) => Math.round(8000 * Math.sin(i / 4)))).toString('base64');

/** The e2e policy for these fixtures: first party (the worker tool needs it), plus extra lines. */
function policy(extra = ''): string {
  return `kind: Policy\nname: outputs\ntrust:\n  firstParty: ["${OUTPUTS}/**"]\n${extra}`;
}

async function session(kind: ClientKind, extra = ''): Promise<{ dirs: HostDirs; client: HostClient }> {
  const dirs = makeHostDirs({ policy: policy(extra), manifests: [OUTPUTS], extraArgs: ['--no-watch'] });
  return { dirs, client: await startClient(dirs, { kind }) };
}

const call = (client: HostClient, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });

describe.each(CLIENT_KINDS)('tool outputs with a %s client', (kind) => {
  let dirs: HostDirs;
  let client: HostClient;
  // onUnknownTool: error_result makes unknown_tool an error result, whose recovery a client can read.
  beforeAll(async () => ({ dirs, client } = await session(kind, 'onUnknownTool: error_result\n')), 60_000);
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  });

  it('every part type arrives in order as its MCP block; an artifact part is linked and readable', async () => {
    const result = await call(client, 'emit', {
      parts: [
        { type: 'text', text: 'a chart and a beep' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        { type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'https://example.com/notes.md', mimeType: 'text/markdown', text: '# notes' } },
        { type: 'resource', resource: { uri: 'https://example.com/chart.png', mimeType: 'image/png', blob: PNG_BASE64 } },
        { type: 'artifact', text: 'day,count\nmon,3\n', mimeType: 'text/csv', name: 'counts.csv' },
      ],
    });
    expect(result['isError']).toBeFalsy();
    expect(result['structuredContent']).toBeUndefined();
    const content = result['content'] as Array<Record<string, unknown>>;
    expect(content.slice(0, 5)).toEqual([
      { type: 'text', text: 'a chart and a beep' },
      { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
      { type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'https://example.com/notes.md', mimeType: 'text/markdown', text: '# notes' } },
      { type: 'resource', resource: { uri: 'https://example.com/chart.png', mimeType: 'image/png', blob: PNG_BASE64 } },
    ]);
    const link = content[5] as { type: string; uri: string; name: string; mimeType: string };
    expect(link).toMatchObject({ type: 'resource_link', name: 'counts.csv', mimeType: 'text/csv' });
    const read = await client.readResource(link.uri);
    expect((read.contents[0] as { text?: string }).text).toBe('day,count\nmon,3\n');
  });

  it.each(['emit_worker', 'emit_oneshot', 'emit_persistent'])('%s gives the same blocks (worker, stdout: output, persistent result)', async (tool) => {
    const result = await call(client, tool, {
      parts: [
        { type: 'text', text: 'look:' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
      ],
    });
    expect(result['content']).toEqual([
      { type: 'text', text: 'look:' },
      { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
    ]);
  });

  it('a part over the limit is spilled as an artifact and linked in its place; the whole image reads back', async () => {
    const big = gradientPng(64, 64) as Buffer;
    const result = await call(client, 'emit_small', {
      parts: [
        { type: 'text', text: 'big:' },
        { type: 'image', data: big.toString('base64'), mimeType: 'image/png' },
        { type: 'text', text: 'end' },
      ],
    });
    const content = result['content'] as Array<Record<string, unknown>>;
    expect(content.map((block) => block['type'])).toEqual(['text', 'resource_link', 'text']);
    expect(content[1]).toMatchObject({ mimeType: 'image/png', size: big.length });
    const read = await client.readResource(String(content[1]!['uri']));
    const blob = (read.contents[0] as { blob?: string }).blob ?? '';
    expect(Buffer.from(blob, 'base64').equals(big)).toBe(true);
  });

  it.each([
    ['a MIME type off the allowlist', { parts: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/svg+xml' }] }, { reason: 'mime_not_allowed', part: 0 }],
    [
      'bad base64',
      {
        parts: [
          { type: 'text', text: 'x' },
          { type: 'image', data: 'iVBORw0K!!', mimeType: 'image/png' },
        ],
      },
      { reason: 'bad_base64', part: 1 },
    ],
    [
      'a host-only value in a model-visible part',
      { kind: 'host_only', hostOnly: { card: 'tok_4242424242' }, parts: [{ type: 'text', text: 'charged tok_4242424242' }] },
      { reason: 'host_only_leak', part: 0 },
    ],
    ['an unknown part type', { parts: [{ type: 'video', data: PNG_BASE64, mimeType: 'video/mp4' }] }, { reason: 'unknown_part_type', part: 0 }],
    ['a hand-made envelope of an unknown kind', { raw: { 'toolhost/output': { kind: 'secret', parts: [] } } }, { reason: 'bad_envelope' }],
  ])('refuses %s: invalid_output, recovery repair', async (_what, args, details) => {
    const error = wireErrorOf(await call(client, 'emit', args));
    expect(error).toMatchObject({ code: 'invalid_output', recovery: 'repair', ...details });
  });

  it('stdout: output that prints a plain value is invalid_output', async () => {
    const error = wireErrorOf(await call(client, 'emit_oneshot', { raw: { answer: 42 } }));
    expect(error).toMatchObject({ code: 'invalid_output', reason: 'not_output_envelope' });
  });

  it('model_error: tool_error with modelError, the parts after the code line, recovery repair', async () => {
    const result = await call(client, 'emit', { kind: 'model_error', parts: [{ type: 'text', text: 'No customer 17; ask for the customer number.' }] });
    const error = wireErrorOf(result);
    expect(error).toEqual({ code: 'tool_error', modelError: true, recovery: 'repair' });
    const content = result['content'] as Array<{ type: string; text?: string }>;
    expect(content).toHaveLength(2);
    expect(content[1]).toEqual({ type: 'text', text: 'No customer 17; ask for the customer number.' });
  });

  it('host_only: the value only in _meta["toolhost/hostOnly"], the model sees modelParts or a notice', async () => {
    const value = { orderId: 'ORD-77-PRIVATE', lines: [1, 2] };
    const withParts = await call(client, 'emit', { kind: 'host_only', hostOnly: value, parts: [{ type: 'text', text: 'Order placed.' }] });
    expect(withParts['isError']).toBeFalsy();
    expect(withParts['content']).toEqual([{ type: 'text', text: 'Order placed.' }]);
    expect(withParts['structuredContent']).toBeUndefined();
    expect((withParts['_meta'] as Record<string, unknown>)['toolhost/hostOnly']).toEqual(value);
    for (const tool of ['emit', 'emit_persistent']) {
      const bare = await call(client, tool, { kind: 'host_only', hostOnly: value });
      const content = bare['content'] as Array<{ type: string; text: string }>;
      expect(content).toHaveLength(1);
      expect(content[0]!.type).toBe('text');
      expect(JSON.stringify(content)).not.toContain('ORD-77-PRIVATE');
      expect((bare['_meta'] as Record<string, unknown>)['toolhost/hostOnly']).toEqual(value);
    }
  });

  it('recovery: a timeout of a non-idempotent tool is stop (its effect is unknown)', async () => {
    expect(wireErrorOf(await call(client, 'stuck_writer'))).toMatchObject({ code: 'timeout', recovery: 'stop' });
  });

  it('recovery: an unknown tool (as an error result) is repair', async () => {
    expect(wireErrorOf(await call(client, 'no_such_tool'))).toMatchObject({ code: 'unknown_tool', recovery: 'repair' });
  });
});

describe.each(CLIENT_KINDS)('terminal tools with a %s client', (kind) => {
  it('are listed with the mark; the success carries it; every later call is call_limit (terminal)', async () => {
    const { dirs, client } = await session(kind);
    try {
      const { tools } = await client.listTools();
      const meta = (name: string) => tools.find((tool) => tool['name'] === name)?.['_meta'] as Record<string, unknown> | undefined;
      expect(meta('done')).toEqual({ 'toolhost/terminal': true });
      expect(meta('ok')?.['toolhost/terminal']).toBeUndefined();
      expect((await call(client, 'ok'))['isError']).toBeFalsy();
      const done = await call(client, 'done', { summary: 'all set' });
      expect(done['isError']).toBeFalsy();
      expect(done['structuredContent']).toEqual({ finished: true, summary: 'all set' });
      expect((done['_meta'] as Record<string, unknown>)['toolhost/terminal']).toBe(true);
      for (const name of ['ok', 'done']) {
        expect(wireErrorOf(await call(client, name))).toMatchObject({ code: 'call_limit', reason: 'terminal', tool: 'done', recovery: 'stop' });
      }
    } finally {
      await stopClient(client, dirs);
      dirs.cleanup();
    }
  });
});

describe.each(CLIENT_KINDS)('failure runs with a %s client', (kind) => {
  it('after maxConsecutiveFailures failures in a row the session stops; a success resets the count', async () => {
    const { dirs, client } = await session(kind, 'limits:\n  maxConsecutiveFailures: 3\n');
    try {
      // Two failures, a success, two failures: never three in a row.
      for (const name of ['broken', 'broken', 'ok', 'broken']) await call(client, name);
      // Refusals are not failures of the run: they neither count nor reset.
      expect(wireErrorOf(await call(client, 'emit', { kind: 'nope' }))).toMatchObject({ code: 'invalid_arguments', recovery: 'repair' });
      expect(wireErrorOf(await call(client, 'broken'))).toMatchObject({ code: 'tool_error', recovery: 'repair' });
      // That made three in a row (broken, invalid_arguments, broken).
      expect(wireErrorOf(await call(client, 'ok'))).toMatchObject({ code: 'call_limit', reason: 'consecutive_failures', limit: 3, failures: 3, recovery: 'stop' });
    } finally {
      await stopClient(client, dirs);
      dirs.cleanup();
    }
  });
});

describe.each(CLIENT_KINDS)('session counters across a reload with a %s client', (kind) => {
  /** SIGHUP, then waits for the host to log that the new configuration is in force. */
  async function reload(client: HostClient): Promise<void> {
    const reloads = () => client.stderrText().split('configuration reloaded').length - 1;
    const before = reloads();
    process.kill(client.pid!, 'SIGHUP');
    await until(() => reloads() > before, 'the reload', 20_000);
  }

  async function withSession(extra: string, body: (client: HostClient) => Promise<void>): Promise<void> {
    const { dirs, client } = await session(kind, extra);
    try {
      await body(client);
    } finally {
      await stopClient(client, dirs);
      dirs.cleanup();
    }
  }

  it('the call budget: with maxCallsPerSession 3 and a reload between calls, the 4th call is refused', () =>
    withSession('limits:\n  maxCallsPerSession: 3\n', async (client) => {
      expect((await call(client, 'ok'))['isError']).toBeFalsy();
      await reload(client);
      expect((await call(client, 'ok'))['isError']).toBeFalsy();
      expect((await call(client, 'ok'))['isError']).toBeFalsy();
      expect(wireErrorOf(await call(client, 'ok'))).toMatchObject({ code: 'call_limit', limit: 3 });
    }));

  it('the failure run: two failures before a reload and one after stop the session', () =>
    withSession('limits:\n  maxConsecutiveFailures: 3\n', async (client) => {
      await call(client, 'broken');
      await call(client, 'broken');
      await reload(client);
      await call(client, 'broken');
      expect(wireErrorOf(await call(client, 'ok'))).toMatchObject({ code: 'call_limit', reason: 'consecutive_failures' });
    }));

  it('the terminal mark: after a terminal success and a reload, calls are still refused', () =>
    withSession('', async (client) => {
      expect((await call(client, 'done'))['isError']).toBeFalsy();
      await reload(client);
      expect(wireErrorOf(await call(client, 'ok'))).toMatchObject({ code: 'call_limit', reason: 'terminal' });
    }));
});

/** A mono 16-bit PCM WAV file (RIFF header, fmt and data chunks) at 8 kHz. */
function wav(samples: readonly number[]): Buffer {
  const data = Buffer.alloc(samples.length * 2);
  samples.forEach((sample, index) => data.writeInt16LE(sample, index * 2));
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28); // bytes per second
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
