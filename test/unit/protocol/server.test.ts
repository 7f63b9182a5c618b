// The protocol layer alone: the real SDK server behind the boundary transport,
// driven by the real SDK clients of both eras over in-process streams. The
// supervisor is a scripted double here (unit scope); test/e2e runs the real host.
import { ResourceNotFoundError } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolhostServer } from '../../../src/protocol/server.js';
import { CLIENT_KINDS, connectClient, type ClientOptions, type TestClient } from '../../helpers/mcp-clients.js';
import { ScriptedSupervisor, SCRIPTED_TOOLS as TOOLS, startScriptedServer, type ScriptedServer } from '../../helpers/scripted-supervisor.js';
import { until } from '../../helpers/wait.js';

interface Harness {
  readonly supervisor: ScriptedSupervisor;
  readonly server: ToolhostServer;
  readonly lines: string[];
  readonly write: (line: string | Buffer) => void;
  readonly client?: TestClient;
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.client?.close().catch(() => undefined);
  await harness?.server.close();
  harness = undefined;
});

function startServer(options: { coalesceMs?: number } = {}): ScriptedServer {
  return startScriptedServer(options);
}

async function startWithClient(options: ClientOptions, transport: { coalesceMs?: number } = {}): Promise<Required<Harness>> {
  const started = startServer(transport);
  const client = await connectClient(started.pair.client, options);
  harness = { ...started, client };
  return harness as Required<Harness>;
}

describe.each(CLIENT_KINDS)('with a %s client', (kind) => {
  it('negotiates its era', async () => {
    const { client } = await startWithClient({ kind });
    const era = 'getProtocolEra' in client.raw ? client.raw.getProtocolEra() : 'legacy';
    expect(era).toBe(kind === 'v2-modern' ? 'modern' : 'legacy');
  });

  it('lists the tools with their annotations, in order', async () => {
    const { client } = await startWithClient({ kind });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool['name'], tool['annotations']])).toEqual(TOOLS.map((tool) => [tool.name, tool.annotations]));
  });

  it('calls a tool and forwards the request facts to the supervisor', async () => {
    const { client, supervisor } = await startWithClient({ kind });
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' }, _meta: { idempotencyKey: 'k1' } });
    expect(result['structuredContent']).toEqual({ echoed: { text: 'hi' } });
    expect(result['isError']).toBeFalsy();
    const request = supervisor.requests[0]!;
    expect(request.args).toEqual({ text: 'hi' });
    expect(request.meta['idempotencyKey']).toBe('k1');
    expect(request.approval.kind).toBe('none');
  });

  it('answers an unknown tool with JSON-RPC -32602 listing the available tools', async () => {
    const { client } = await startWithClient({ kind });
    const failure = await client.callTool({ name: 'nope', arguments: {} }).then(
      () => undefined,
      (error: unknown) => error as { code?: number; data?: unknown },
    );
    expect(failure?.code).toBe(-32602);
    expect(failure?.data).toEqual({ code: 'unknown_tool', available: ['echo', 'write_note'], recovery: 'repair' });
  });

  it('reads an artifact, and answers an unknown one with resource-not-found', async () => {
    const { client } = await startWithClient({ kind });
    const read = await client.readResource('toolhost://artifacts/abc');
    expect(read.contents).toEqual([{ uri: 'toolhost://artifacts/abc', mimeType: 'text/plain', text: 'the whole text' }]);
    const failure = await client.readResource('toolhost://artifacts/nope').then(
      () => undefined,
      (error: unknown) => error as { code?: number },
    );
    expect(failure?.code).toBe(new ResourceNotFoundError('toolhost://artifacts/nope').code);
  });

  it('forwards progress, dropping non-increasing steps, and cancels: nothing is sent for the request afterwards', async () => {
    const { client, supervisor, lines } = await startWithClient({ kind });
    const progress: Array<{ progress: number; message?: string }> = [];
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: {} }, { signal: controller.signal, onprogress: (event) => progress.push(event) });
    call.catch(() => undefined);
    await supervisor.waitStarted;
    await until(() => progress.length === 1);
    const linesBeforeCancel = lines.length;
    controller.abort('user stop');
    await expect(call).rejects.toBeDefined();
    await until(() => supervisor.requests[0]!.control?.aborted === true);
    // A later call's answer proves the server kept going; nothing about the cancelled call came first.
    await client.callTool({ name: 'echo', arguments: {} });
    const after = lines.slice(linesBeforeCancel).map((line) => JSON.parse(line) as { id?: unknown; method?: string; params?: { data?: { callId?: string } } });
    // Only the echo call's answer and its own lifecycle events: nothing about call c1.
    expect(after.filter((message) => message.method === undefined)).toHaveLength(1);
    expect(after.filter((message) => message.method === 'notifications/progress')).toEqual([]);
    expect(after.filter((message) => message.params?.data?.callId === 'c1')).toEqual([]);
    expect(progress).toEqual([{ progress: 1, total: 2, message: 'half' }]);
  });

  it('without elicitation, an approval is approval_required', async () => {
    const { client } = await startWithClient({ kind });
    const result = await client.callTool({ name: 'write_note', arguments: {} });
    expect(result['isError']).toBe(true);
    expect((result['_meta'] as Record<string, unknown>)['toolhost/error']).toEqual({ code: 'approval_required', recovery: 'stop' });
  });

  it.each([
    ['approve', { action: 'accept' as const, content: { approve: true } }, 'written'],
    ['decline', { action: 'decline' as const }, 'approval_denied'],
    ['cancel', { action: 'cancel' as const }, 'approval_denied'],
    ['accept without approving', { action: 'accept' as const, content: { approve: false } }, 'approval_denied'],
  ])('with elicitation, the user answers %s', async (_name, answer, expected) => {
    const elicitations: string[] = [];
    const { client, supervisor } = await startWithClient({ kind, elicit: () => answer, elicitations });
    const result = await client.callTool({ name: 'write_note', arguments: {} });
    expect(elicitations).toEqual(['Allow write_note?']);
    if (expected === 'written') {
      expect(result['content']).toEqual([{ type: 'text', text: 'written' }]);
    } else {
      expect((result['_meta'] as Record<string, unknown>)['toolhost/error']).toEqual({ code: expected, recovery: 'stop' });
    }
    const kinds = supervisor.requests.map((request) => request.approval.kind);
    expect(kinds).toEqual(kind === 'v2-modern' ? ['input_required', 'input_required'] : ['elicitation']);
  });
});

describe('lifecycle events', () => {
  it('reach a legacy client as log messages once it asked with logging/setLevel', async () => {
    const logs: Array<{ level: string; logger?: string; data: unknown }> = [];
    const { client } = await startWithClient({ kind: 'v2-legacy', onLog: (params) => logs.push(params) });
    await (client.raw as { setLoggingLevel(level: string): Promise<unknown> }).setLoggingLevel('info');
    await client.callTool({ name: 'echo', arguments: {} });
    await until(() => logs.length === 2);
    expect(logs.map((log) => [log.level, log.logger, (log.data as { type: string }).type])).toEqual([
      ['info', 'toolhost', 'tool.started'],
      ['info', 'toolhost', 'tool.completed'],
    ]);
  });

  it('respect the level a legacy client set: warning hears tool.failed only', async () => {
    const logs: Array<{ level: string; logger?: string; data: unknown }> = [];
    const { client, supervisor } = await startWithClient({ kind: 'v2-legacy', onLog: (params) => logs.push(params) });
    await (client.raw as { setLoggingLevel(level: string): Promise<unknown> }).setLoggingLevel('warning');
    await client.callTool({ name: 'echo', arguments: {} });
    // The events of a call are written before its answer: none can arrive later.
    expect(logs).toEqual([]);
    expect(supervisor.requests.at(-1)?.onEvent).toBeDefined();
  });

  it.each(CLIENT_KINDS)('are not built or sent for a %s client that asked for no log messages', async (kind) => {
    const logs: unknown[] = [];
    const { client, supervisor } = await startWithClient({ kind, onLog: (params) => logs.push(params) });
    await client.callTool({ name: 'echo', arguments: {} });
    // The events of a call are written before its answer: none can arrive later.
    expect(logs).toEqual([]);
    expect(supervisor.requests.at(-1)?.onEvent).toBeUndefined();
  });
});

describe('raw lines', () => {
  async function answerTo(line: string | Buffer): Promise<Record<string, unknown>> {
    const started = startServer();
    harness = started;
    started.write(Buffer.concat([Buffer.isBuffer(line) ? line : Buffer.from(line), Buffer.from('\n')]));
    await until(() => started.lines.length > 0);
    return JSON.parse(started.lines[0]!) as Record<string, unknown>;
  }

  it.each([
    ['not JSON', '{"jsonrpc":"2.0","id":1,"method":', 1, -32700, 'invalid_json'],
    ['duplicate keys', '{"jsonrpc":"2.0","id":2,"id":2,"method":"ping"}', 2, -32600, 'duplicate_key'],
    ['too big', `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"${'x'.repeat(5000)}"}}`, 3, -32600, 'too_large'],
    ['arguments not an object', '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":"x"}}', 4, -32600, 'arguments_not_object'],
  ])('%s is answered with its id', async (_name, line, id, code, reason) => {
    const answer = await answerTo(line);
    expect(answer).toMatchObject({ jsonrpc: '2.0', id, error: { code, data: { code: 'malformed_request', reason } } });
  });

  it('invalid UTF-8 is answered with its id', async () => {
    const line = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"u","method":"ping","params":{"x":"'), Buffer.from([0xfe]), Buffer.from('"}}')]);
    expect(await answerTo(line)).toMatchObject({ id: 'u', error: { code: -32600, data: { code: 'malformed_request', reason: 'invalid_utf8' } } });
  });

  it('a line after a malformed one is still served', async () => {
    const started = startServer();
    harness = started;
    started.write(
      'garbage\n{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n',
    );
    await until(() => started.lines.length === 2);
    const [first, second] = started.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(first).toMatchObject({ id: null, error: { code: -32700 } });
    expect(second).toMatchObject({ id: 9, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'toolhost' } } });
  });
});

describe('shutdown', () => {
  it('cancelInFlight answers a running call with a cancelled error result', async () => {
    const { client, supervisor, server } = await startWithClient({ kind: 'v2-legacy' });
    const call = client.callTool({ name: 'wait', arguments: {} });
    await supervisor.waitStarted;
    await server.cancelInFlight(2_000);
    const result = await call;
    expect(result['isError']).toBe(true);
    expect((result['_meta'] as Record<string, unknown>)['toolhost/error']).toEqual({ code: 'cancelled', reason: 'shutdown', recovery: 'stop' });
    // One termination control per call, built here and handed down: the request carries no signal besides it.
    const request = supervisor.requests.find((candidate) => candidate.name === 'wait');
    expect(request?.control).toBeDefined();
    expect(Object.keys(request ?? {})).not.toContain('signal');
    expect(request?.control.reason).toBe('cancelled');
  });
});

describe('reload', () => {
  it('replaceSupervisor: new calls go to the new one, a running call finishes on the old one, the client hears list_changed', async () => {
    const { client, supervisor: old, server, lines } = await startWithClient({ kind: 'v2-legacy' });
    const running = client.callTool({ name: 'wait', arguments: {} });
    await old.waitStarted;
    const next = new ScriptedSupervisor();
    await server.replaceSupervisor(next);
    await until(() => lines.some((line) => line.includes('notifications/tools/list_changed')));
    await client.callTool({ name: 'echo', arguments: { text: 'new' } });
    expect(next.requests.map((request) => request.name)).toEqual(['echo']);
    let idle = false;
    const idleWait = server.whenIdle(old).then(() => (idle = true));
    expect(idle).toBe(false);
    await server.whenIdle(next);
    await server.cancelInFlight(2_000);
    await running;
    await idleWait;
    expect(idle).toBe(true);
  });
});

describe('regression: progress read in the same chunk as the response is lost by SDK clients', () => {
  it.each(CLIENT_KINDS)('%s receives every progress step when the client reads in batches', async (kind) => {
    const { client } = await startWithClient({ kind }, { coalesceMs: 20 });
    const progress: number[] = [];
    await client.callTool({ name: 'steps', arguments: {} }, { onprogress: (event) => progress.push(event.progress) });
    expect(progress).toEqual([1, 2]);
  });
});
