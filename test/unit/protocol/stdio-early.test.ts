// serve's early front (stdio-early.ts, early-initialize.ts): `initialize`
// answered before the host exists, the other messages held in order and handed
// to the real SDK server once it does, cancellations of held requests, the byte
// cap on what is held, and a host that never comes. The host here is the real
// protocol stack (boundary transport, SDK server) over in-process streams, built
// only when the test says so: that is what proves the order. The SDK's own
// answer to `initialize` is the reference the early answer is held to.
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { answerInitializeEarly } from '../../../src/protocol/early-initialize.js';
import { serveToolhost, type ToolhostServer } from '../../../src/protocol/server.js';
import { LEGACY_PROTOCOL_VERSIONS } from '../../../src/protocol/server-identity.js';
import { BoundaryStdioTransport, ProtocolOutput } from '../../../src/protocol/stdio.js';
import { EarlyStdio, type EarlyError } from '../../../src/protocol/stdio-early.js';
import { CLIENT_KINDS, connectClient, createStreamPair, type TestClient } from '../../helpers/mcp-clients.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { ScriptedSupervisor, startScriptedServer } from '../../helpers/scripted-supervisor.js';
import { until } from '../../helpers/wait.js';

const SERVER_INFO = { name: 'toolhost', version: 'test' };

type Message = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

interface Early {
  readonly early: EarlyStdio;
  readonly pair: ReturnType<typeof createStreamPair>;
  /** Every line written to the client so far, parsed. */
  readonly lines: () => Message[];
  readonly write: (message: unknown) => void;
  /** Builds the host's protocol stack behind the early front (what serve does once the host is ready). */
  readonly startHost: () => { supervisor: ScriptedSupervisor; server: ToolhostServer; log: ReturnType<typeof recordingLogger> };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function startEarly(options: { maxMessageBytes?: number; maxHeldBytes?: number } = {}): Early {
  const pair = createStreamPair();
  const maxMessageBytes = options.maxMessageBytes ?? 4096;
  const early = new EarlyStdio({
    input: pair.serverInput,
    takeChannel: async () => ({ output: pair.serverOutput, fd1: 'stderr' }),
    serverInfo: SERVER_INFO,
    maxMessageBytes,
    maxHeldBytes: options.maxHeldBytes ?? 2 * maxMessageBytes,
  });
  let text = '';
  pair.serverOutput.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const lines = () =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Message);
  const startHost = () => {
    const supervisor = new ScriptedSupervisor();
    const log = recordingLogger();
    const output = new ProtocolOutput(pair.serverOutput, log.logger);
    const transport = new BoundaryStdioTransport({ input: early, output, maxMessageBytes, logger: log.logger });
    const server = serveToolhost(transport, { supervisor, logger: log.logger, serverInfo: SERVER_INFO });
    cleanups.push(() => server.close());
    return { supervisor, server, log };
  };
  cleanups.push(async () => early.stop());
  return { early, pair, lines, write: (message) => pair.serverInput.write(`${JSON.stringify(message)}\n`), startHost };
}

const initialize = (id: number | string, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' }, ...params },
});

const answersTo = (lines: Message[], id: unknown) => lines.filter((line) => line.id === id && line.method === undefined);

describe.each(CLIENT_KINDS)('a %s client that connects while the host is being built', (kind) => {
  it('is served once the host exists: held requests answered in order, initialize answered once', async () => {
    const { early, pair, lines, startHost } = startEarly();
    let client: TestClient | undefined;
    const connected = connectClient(pair.client, { kind }).then((connectedClient) => (client = connectedClient));
    cleanups.push(async () => client?.close().catch(() => undefined));
    if (kind !== 'v2-modern') {
      // A legacy client's handshake completes with no host at all.
      await connected;
      expect(early.answeredInitialize).toBeDefined();
    } else {
      // A modern client opens with server/discover, which only the SDK answers: it waits for the host.
      await until(() => early.answeredInitialize === undefined && lines().length === 0, 'the discover request to be held');
    }
    const host = { started: false };
    const listing = connected.then(() => client!.listTools());
    const call = connected.then(() => client!.callTool({ name: 'echo', arguments: { text: 'held' } }));
    if (kind !== 'v2-modern') await until(() => pair.serverInput.readableLength === 0, 'the requests to be read');
    expect(host.started).toBe(false);
    const { supervisor, log } = startHost();
    host.started = true;
    expect((await listing).tools.map((tool) => tool['name'])).toContain('echo');
    expect((await call)['structuredContent']).toEqual({ echoed: { text: 'held' } });
    expect(supervisor.requests.map((request) => request.args)).toEqual([{ text: 'held' }]);
    // The SDK saw the initialize too (it answers it again); that second answer never reached the client.
    if (kind !== 'v2-modern') expect(answersTo(lines(), early.answeredInitialize!.id)).toHaveLength(1);
    expect(log.lines().filter((line) => String(line['msg']).includes('differs'))).toEqual([]);
  });
});

describe('the early initialize answer is the SDK server answer', () => {
  const sdkAnswer = async (request: unknown): Promise<Message> => {
    const started = startScriptedServer({ maxMessageBytes: 65_536 });
    cleanups.push(() => started.server.close());
    started.write(`${JSON.stringify(request)}\n`);
    await until(() => started.lines.length > 0, 'the SDK answer');
    return JSON.parse(started.lines[0]!) as Message;
  };
  const earlyAnswer = (request: unknown) => answerInitializeEarly(Buffer.from(JSON.stringify(request)), SERVER_INFO, 65_536)?.response;

  it('negotiates from the SDK list of legacy revisions', () => {
    expect(LEGACY_PROTOCOL_VERSIONS).toEqual([...SUPPORTED_PROTOCOL_VERSIONS]);
  });

  it.each<[string, Record<string, unknown>]>([
    ...LEGACY_PROTOCOL_VERSIONS.map((version): [string, Record<string, unknown>] => [`revision ${version}`, { protocolVersion: version }]),
    ['an unknown revision', { protocolVersion: '2099-01-01' }],
    ['a modern revision in a legacy initialize', { protocolVersion: '2026-07-28' }],
    ['elicitation, roots and sampling', { capabilities: { elicitation: {}, roots: { listChanged: true }, sampling: { context: {} } } }],
    ['elicitation forms and urls', { capabilities: { elicitation: { form: { applyDefaults: true }, url: {} } } }],
    ['experimental and extensions', { capabilities: { experimental: { x: { on: true } }, extensions: { 'io.example/y': {} } } }],
    ['a full clientInfo', { clientInfo: { name: 'c', title: 'C', version: '2', websiteUrl: 'https://example.com', description: 'd' } }],
  ])('%s', async (_label, params) => {
    const request = initialize('init-1', params);
    const answer = earlyAnswer(request);
    expect(answer).toBeDefined();
    expect(answer).toEqual(await sdkAnswer(request));
  });

  it.each([
    ['params with _meta', initialize(1, { _meta: { progressToken: 1 } })],
    ['a clientInfo with icons', initialize(1, { clientInfo: { name: 'c', version: '1', icons: [] } })],
    ['a clientInfo without a version', initialize(1, { clientInfo: { name: 'c' } })],
    ['the tasks capability', initialize(1, { capabilities: { tasks: {} } })],
    ['a capability of the wrong type', initialize(1, { capabilities: { roots: { listChanged: 'yes' } } })],
    ['an unknown capability', initialize(1, { capabilities: { telepathy: {} } })],
    ['a protocolVersion that is not a string', initialize(1, { protocolVersion: 20251125 })],
    ['an extra member', { ...initialize(1), extra: true }],
    ['a fractional id', initialize(1.5)],
    ['another method', { jsonrpc: '2.0', id: 1, method: 'ping' }],
  ])('leaves %s to the SDK', (_label, request) => {
    expect(earlyAnswer(request)).toBeUndefined();
  });

  it('leaves lines the boundary refuses to the SDK: a duplicate key, invalid UTF-8, a line past the cap', () => {
    const line = JSON.stringify(initialize(1));
    expect(answerInitializeEarly(Buffer.from(line.replace('"id":1', '"id":1,"id":2')), SERVER_INFO, 65_536)).toBeUndefined();
    expect(answerInitializeEarly(Buffer.concat([Buffer.from(line.slice(0, -2)), Buffer.from([0xff]), Buffer.from('}}')]), SERVER_INFO, 65_536)).toBeUndefined();
    expect(answerInitializeEarly(Buffer.from(line), SERVER_INFO, line.length - 1)).toBeUndefined();
  });
});

describe('held messages', () => {
  it('a request cancelled while held never runs and is never answered; the others are', async () => {
    const { lines, write, startHost } = startEarly();
    write(initialize(1));
    write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    write({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'cancelled' } } });
    write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'changed my mind' } });
    write({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'kept' } } });
    await until(() => lines().length === 1, 'the initialize answer');
    const { supervisor } = startHost();
    await until(() => answersTo(lines(), 3).length === 1, 'the answer to the kept call');
    expect(supervisor.requests.map((request) => request.args)).toEqual([{ text: 'kept' }]);
    expect(answersTo(lines(), 2)).toEqual([]);
    expect(lines().map((line) => line.id)).toEqual([1, 3]);
  });

  it('a malformed line held is answered by the boundary, in its turn', async () => {
    const { lines, pair, write, startHost } = startEarly();
    write(initialize(1));
    pair.serverInput.write('{"jsonrpc":"2.0","id":"bad","method":"tools/list"\n');
    write({ jsonrpc: '2.0', id: 'good', method: 'tools/list' });
    await until(() => lines().length === 1, 'the initialize answer');
    startHost();
    await until(() => lines().length === 3, 'both answers');
    expect(lines().map((line) => [line.id, line.error?.data?.['reason']])).toEqual([
      [1, undefined],
      ['bad', 'invalid_json'],
      ['good', undefined],
    ]);
  });

  it('are copies: the chunk a held line or an oversized prefix came in may be read into again', async () => {
    const { lines, pair, write, startHost } = startEarly({ maxMessageBytes: 256, maxHeldBytes: 8192 });
    write(initialize(1));
    await until(() => lines().length === 1, 'the initialize answer');
    const request = `${JSON.stringify({ jsonrpc: '2.0', id: 'held', method: 'tools/list' })}\n`;
    const oversized = `${JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'tools/list', params: { pad: 'x'.repeat(300) } })}\n`;
    const chunk = Buffer.from(request + oversized);
    pair.serverInput.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
    // What a reader that reuses its buffer does with the next read (serve's stdin may).
    chunk.fill('#');
    startHost();
    await until(() => lines().length === 3, 'both answers');
    expect(answersTo(lines(), 'held')[0]?.result).toBeDefined();
    expect(answersTo(lines(), 'big')[0]?.error?.data?.['reason']).toBe('too_large');
  });

  it('are bounded: a request past the cap is answered at once with queue_full, a notification past it dropped; the rest are served', async () => {
    const { lines, write, startHost } = startEarly({ maxHeldBytes: 4096 });
    write(initialize(1));
    const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
    for (const id of ids) {
      write({ jsonrpc: '2.0', id, method: 'tools/list' });
      write({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: 1 } });
    }
    await until(() => lines().some((line) => line.error?.data?.['reason'] === 'queue_full'), 'the first refusal');
    const refusedBeforeHost = lines().filter((line) => line.error !== undefined);
    expect(refusedBeforeHost.length).toBeGreaterThan(0);
    expect(refusedBeforeHost[0]!.error).toMatchObject({ code: -32603, data: { code: 'internal', reason: 'queue_full', maxHeldBytes: 4096 } });
    startHost();
    await until(() => ids.every((id) => answersTo(lines(), id).length === 1), 'an answer to every request');
    const served = ids.filter((id) => answersTo(lines(), id)[0]!.result !== undefined);
    // The held ones are the first ones, in order; each request has exactly one answer.
    expect(served).toEqual(ids.slice(0, served.length));
    expect(served.length + refusedBeforeHost.length).toBe(ids.length);
  });

  it('a client that floods and does not read: stdin is read no further while the answers it is given wait to be written', async () => {
    const pair = createStreamPair();
    const early = new EarlyStdio({
      input: pair.serverInput,
      takeChannel: async () => ({ output: pair.serverOutput, fd1: 'stderr' }),
      serverInfo: SERVER_INFO,
      maxMessageBytes: 1024,
      maxHeldBytes: 1024,
    });
    cleanups.push(async () => early.stop());
    await early.channel;
    // As a pipe hands them: chunks of 30 lines.
    const lines = Array.from({ length: 3000 }, (_, i) => `${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' })}\n`);
    for (let i = 0; i < lines.length; i += 30) pair.serverInput.write(lines.slice(i, i + 30).join(''));
    // Nobody reads serverOutput: the refusals fill its buffers, then the front stops reading.
    await until(() => pair.serverInput.readableFlowing === false && pair.serverInput.readableLength > 0, 'the front to stop reading');
    const bufferedBytes = pair.serverOutput.readableLength + pair.serverOutput.writableLength;
    await new Promise((resolve) => setImmediate(resolve));
    expect(pair.serverOutput.readableLength + pair.serverOutput.writableLength).toBe(bufferedBytes);
    // Once the client reads, the rest is read and answered: every request but the few held, once.
    let text = '';
    pair.serverOutput.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    await until(() => pair.serverInput.readableLength === 0 && pair.serverOutput.readableLength === 0, 'the rest to be read');
    const ids = text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as Message).id);
    expect(bufferedBytes).toBeLessThan(text.length / 2);
    expect(ids.length).toBeGreaterThan(2990);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a host that never comes: held requests and later ones get the failure; notifications nothing', async () => {
    const { early, lines, write } = startEarly();
    write(initialize(1));
    write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    write({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await until(() => lines().length === 1, 'the initialize answer');
    const failure: EarlyError = { code: -32603, message: 'toolhost did not start: test.', data: { code: 'internal', reason: 'host_not_started' } };
    await early.fail(failure);
    write({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: {} } });
    write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
    await until(() => lines().length === 3, 'the failure answers');
    expect(lines().map((line) => [line.id, line.error ?? 'result'])).toEqual([
      [1, 'result'],
      [2, failure],
      [3, failure],
    ]);
  });
});
