// Raw lines that are JSON-RPC requests, pass the raw-line checks, and that the
// MCP SDK's message schemas refuse (it would drop them with only an onerror
// notice, and the client would wait for ever): through the built host, in both
// eras, each is answered -32600 malformed_request with its id and the refused
// member; such a notification is not answered but logged at warn; and the
// connection serves the next call (SPEC section 5 step 1, section 6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { collectOutput, makeHostDirs, spawnRawHost, until, waitForExit, type HostDirs, type RawHost } from '../helpers/host-session.js';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-refused', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

type Message = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number; data?: Record<string, unknown> } };

const refusal = (key: string) => ({ code: 'malformed_request', reason: 'not_mcp_message', key, recovery: 'stop' });

describe.each(['legacy', 'modern'] as const)('%s era: lines the SDK would drop', (era) => {
  let dirs: HostDirs;
  let host: RawHost;
  let output: ReturnType<typeof collectOutput>;
  /** The era's _meta around `meta` (modern requests carry the envelope). */
  const metaOf = (meta: Record<string, unknown> = {}) => (era === 'modern' ? { ...ENVELOPE, ...meta } : meta);
  const parsed = (): Message[] => output.lines.map((line) => JSON.parse(line) as Message);
  const answerTo = async (id: unknown): Promise<Message> => {
    const isAnswer = (message: Message) => message.id === id && message.method === undefined;
    await until(() => parsed().some(isAnswer), `the answer to ${String(id)}`);
    return parsed().find(isAnswer)!;
  };
  const send = (message: unknown): void => {
    host.stdin.write(`${JSON.stringify(message)}\n`);
  };
  const echo = (id: string, text: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text }, _meta: metaOf() } });

  beforeAll(async () => {
    await ensureBuilt();
    dirs = makeHostDirs();
    host = spawnRawHost(dirs);
    output = collectOutput(host);
  }, 300_000);
  afterAll(async () => {
    host.stdin.end();
    await waitForExit(host);
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
    dirs.cleanup();
  });

  it('the very first line, before an era is chosen, is answered (serveStdio would discard it)', async () => {
    send({ jsonrpc: '2.0', id: `${era}-first`, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: metaOf({ progressToken: 1.5 }) } });
    const answer = await answerTo(`${era}-first`);
    expect(answer.error?.code).toBe(-32600);
    expect(answer.error?.data).toEqual(refusal('/params/_meta/progressToken'));
  });

  it('opens the era and serves a call', async () => {
    if (era === 'legacy') {
      send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      expect((await answerTo('init')).result?.['protocolVersion']).toBe('2025-11-25');
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    }
    send(echo('open', 'opened'));
    expect((await answerTo('open')).result?.['structuredContent']).toEqual({ echo: { text: 'opened' } });
  });

  it.each([
    ['a fractional progress token', 1, { _meta: metaOf({ progressToken: 1.5 }) }, {}, '/params/_meta/progressToken'],
    ['a boolean progress token', 'p-true', { _meta: metaOf({ progressToken: true }) }, {}, '/params/_meta/progressToken'],
    ['an object progress token', 3, { _meta: metaOf({ progressToken: {} }) }, {}, '/params/_meta/progressToken'],
    ['_meta null', 4, { _meta: null }, {}, '/params/_meta'],
    ['an extra top-level member', 'extra', { _meta: metaOf() }, { extra: 1 }, '/extra'],
    [
      'a related-task whose taskId is not a string',
      6,
      { _meta: metaOf({ 'io.modelcontextprotocol/related-task': { taskId: 7 } }) },
      {},
      '/params/_meta/io.modelcontextprotocol~1related-task/taskId',
    ],
  ] as const)('a tools/call with %s is answered with its id', async (_name, id, params, extra, key) => {
    send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {}, ...params }, ...extra });
    const answer = await answerTo(id);
    expect(answer.error?.code).toBe(-32600);
    expect(answer.error?.data).toEqual(refusal(key));
  });

  it('another method is answered the same way', async () => {
    send({ jsonrpc: '2.0', id: 'list', method: 'tools/list', params: { _meta: metaOf({ progressToken: 0.25 }) } });
    expect((await answerTo('list')).error).toEqual({ code: -32600, message: 'Invalid Request', data: refusal('/params/_meta/progressToken') });
  });

  it('a notification the SDK would drop is not answered, only logged at warn; the next call is served', async () => {
    const before = output.lines.length;
    send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'none', _meta: metaOf({ progressToken: 2.5 }) } });
    send(echo('after', 'still served'));
    expect((await answerTo('after')).result?.['structuredContent']).toEqual({ echo: { text: 'still served' } });
    // Boundary answers are written as the line is read, so one for the notification would precede the call's answer.
    expect(
      parsed()
        .slice(before)
        .filter((message) => message.method === undefined && message.id !== 'after'),
    ).toEqual([]);
    await until(() => output.stderr().includes('"method":"notifications/cancelled"'), 'the warning about the notification');
    const warning = output
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"method":"notifications/cancelled"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warning).toHaveLength(1);
    expect(warning[0]).toMatchObject({ level: 40, code: 'malformed_request', reason: 'not_mcp_message', key: '/params/_meta/progressToken' });
  });
});
