// The 2026-07-28 era on the wire, in raw lines: no initialize, version and
// capabilities in each request's _meta, and an approval as an input_required
// result whose signed requestState is retried once (SPEC section 6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { collectOutput, makeHostDirs, spawnRawHost, until, waitForExit, type HostDirs, type RawHost } from '../helpers/host-session.js';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-modern', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

type Message = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number; data?: Record<string, unknown> } };

describe('a modern-era client on the wire', () => {
  let dirs: HostDirs;
  let host: RawHost;
  let output: ReturnType<typeof collectOutput>;
  let nextId = 100;
  async function call(method: string, params: Record<string, unknown>): Promise<Message> {
    const id = nextId++;
    host.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...ENVELOPE, ...(params['_meta'] as object) } } })}\n`);
    await until(() => output.lines.some((line) => (JSON.parse(line) as Message).id === id), `the answer to ${id}`);
    return output.lines.map((line) => JSON.parse(line) as Message).find((message) => message.id === id)!;
  }

  beforeAll(async () => {
    await ensureBuilt();
    dirs = makeHostDirs();
    host = spawnRawHost(dirs);
    output = collectOutput(host);
  }, 300_000);
  afterAll(async () => {
    host.stdin.end();
    await waitForExit(host);
    await waitForNoMarkedProcesses(dirs.marker);
    dirs.cleanup();
  });

  it('server/discover names the modern revision and our capabilities', async () => {
    const answer = await call('server/discover', {});
    expect(answer.result?.['supportedVersions']).toContain('2026-07-28');
    expect(answer.result?.['capabilities']).toMatchObject({ tools: {}, resources: {} });
  });

  it('a call needing approval answers input_required; the retry with the state and an approving answer runs', async () => {
    const first = await call('tools/call', { name: 'note_writer', arguments: { text: 'modern' } });
    expect(first.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        approve: {
          method: 'elicitation/create',
          params: { mode: 'form', requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] } },
        },
      },
    });
    const requestState = first.result?.['requestState'];
    expect(typeof requestState).toBe('string');

    const approve = { approve: { action: 'accept', content: { approve: true } } };
    const retry = await call('tools/call', { name: 'note_writer', arguments: { text: 'modern' }, requestState, inputResponses: approve });
    expect(retry.result?.['isError']).toBeFalsy();
    expect(retry.result?.['structuredContent']).toEqual({ written: 'modern' });

    // Accepted once: the same state again is refused.
    const replay = await call('tools/call', { name: 'note_writer', arguments: { text: 'modern' }, requestState, inputResponses: approve });
    expect(replay.result?.['isError']).toBe(true);
    expect((replay.result?.['_meta'] as Record<string, { code: string }>)['toolhost/error']!.code).toBe('approval_denied');
  });

  it('a state retried with other arguments is approval_denied', async () => {
    const first = await call('tools/call', { name: 'note_writer', arguments: { text: 'one thing' } });
    const requestState = first.result?.['requestState'];
    const altered = await call('tools/call', {
      name: 'note_writer',
      arguments: { text: 'another thing' },
      requestState,
      inputResponses: { approve: { action: 'accept', content: { approve: true } } },
    });
    expect((altered.result?.['_meta'] as Record<string, { code: string }>)['toolhost/error']!.code).toBe('approval_denied');
  });

  it('a declined answer is approval_denied', async () => {
    const first = await call('tools/call', { name: 'note_writer', arguments: { text: 'declined' } });
    const declined = await call('tools/call', {
      name: 'note_writer',
      arguments: { text: 'declined' },
      requestState: first.result?.['requestState'],
      inputResponses: { approve: { action: 'decline' } },
    });
    expect((declined.result?.['_meta'] as Record<string, { code: string }>)['toolhost/error']!.code).toBe('approval_denied');
  });

  it('results carry resultType on this era', async () => {
    const answer = await call('tools/call', { name: 'echo', arguments: { text: 'typed' } });
    expect(answer.result).toMatchObject({ resultType: 'complete', structuredContent: { echo: { text: 'typed' } } });
  });
});
