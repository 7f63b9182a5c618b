// The tools/call fast path against the SDK path, differentially: the same corpus
// of raw lines and the same client sessions (SDK v1 and v2, both eras) run once
// with the fast path and once without it, and every byte the server writes must
// be the same. The server is the real SDK behind the boundary transport; the
// supervisor is the scripted double (unit scope).
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cancelledRequestId, plainResultInWireOrder, plainToolsCall } from '../../../src/protocol/call-fast-path.js';
import type { ToolhostServer } from '../../../src/protocol/server.js';
import { countAbortControllers } from '../../helpers/abort-count.js';
import { CLIENT_KINDS, connectClient, type ClientKind, type TestClient } from '../../helpers/mcp-clients.js';
import { startScriptedServer, type ScriptedServer, type ScriptedSupervisor } from '../../helpers/scripted-supervisor.js';
import { until } from '../../helpers/wait.js';

interface Session {
  readonly supervisor: ScriptedSupervisor;
  readonly server: ToolhostServer;
  readonly lines: string[];
  readonly pair: ScriptedServer['pair'];
  send(message: unknown): void;
  /** Waits until a written line satisfies `match`; returns it parsed. */
  line(match: (message: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>>;
}

const open: Session[] = [];
afterEach(async () => {
  for (const session of open.splice(0)) await session.server.close();
  vi.restoreAllMocks();
});

function startSession(callFastPath: boolean): Session {
  const { supervisor, server, lines, pair } = startScriptedServer({ callFastPath, maxMessageBytes: 64 * 1024 });
  const session: Session = {
    supervisor,
    server,
    lines,
    pair,
    send: (message) => pair.serverInput.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`),
    async line(match, what) {
      let found: Record<string, unknown> | undefined;
      try {
        await until(() => {
          found = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find(match);
          return found !== undefined;
        }, what);
      } catch (error) {
        throw new Error(`${String(error)}; written: ${lines.map((line) => line.slice(0, 120)).join(' | ')}`);
      }
      return found!;
    },
  };
  open.push(session);
  return session;
}

/** A step of a raw session: a line to write, then (for a request) the wait for its answer. */
type Step =
  | { readonly send: unknown; readonly answered?: RequestIdLike }
  /** Several lines in one write: the server reads them in one go, so their order is the test. */
  | { readonly chunk: readonly unknown[]; readonly answered: readonly RequestIdLike[] }
  | { readonly until: 'wait-started' | 'wait-aborted' }
  | { readonly elicit: 'accept' | 'decline' };
type RequestIdLike = string | number;

const INITIALIZE = (capabilities: Record<string, unknown> = {}) => ({
  send: { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw', version: '1' } } },
  answered: 'init',
});
const INITIALIZED = { send: { jsonrpc: '2.0', method: 'notifications/initialized' } };
const call = (id: RequestIdLike, params: unknown): Step => ({ send: { jsonrpc: '2.0', id, method: 'tools/call', params }, answered: id });
/** A call the SDK's JSON-RPC request schema refuses: the boundary answers it (malformed_request) before either door. */
const refused = (id: RequestIdLike, params: unknown, extra: Record<string, unknown> = {}): Step => ({
  send: { jsonrpc: '2.0', id, method: 'tools/call', params, ...extra },
  answered: id,
});

/** Runs `steps` and returns every line the server wrote, once the last answer is in. */
async function runRaw(callFastPath: boolean, steps: readonly Step[]): Promise<string[]> {
  const session = startSession(callFastPath);
  for (const step of steps) {
    if ('send' in step) {
      session.send(step.send);
      const id = step.answered;
      if (id !== undefined) await session.line((message) => message['id'] === id && message['method'] === undefined, `the answer to ${String(id)}`);
    } else if ('chunk' in step) {
      session.pair.serverInput.write(step.chunk.map((message) => `${JSON.stringify(message)}\n`).join(''));
      for (const id of step.answered) await session.line((message) => message['id'] === id && message['method'] === undefined, `the answer to ${String(id)}`);
    } else if ('until' in step) {
      if (step.until === 'wait-started') await session.supervisor.waitStarted;
      else await until(() => session.supervisor.requests.some((request) => request.name === 'wait' && request.control?.aborted === true), 'the wait call aborted');
    } else {
      const question = await session.line((message) => message['method'] === 'elicitation/create', 'an elicitation');
      const result = step.elicit === 'accept' ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
      session.send({ jsonrpc: '2.0', id: question['id'], result });
    }
  }
  return session.lines;
}

/** The raw corpus: each a session of its own, legacy era unless it says otherwise. */
const CORPUS: ReadonlyArray<readonly [string, readonly Step[]]> = [
  [
    'valid calls: ids of both kinds, no arguments, _meta of the caller',
    [
      INITIALIZE(),
      INITIALIZED,
      call(1, { name: 'echo', arguments: { text: 'hi', nested: { a: [1, 2, { b: null }] } } }),
      call('s-1', { name: 'echo' }),
      call(2, { name: 'echo', arguments: {}, _meta: { idempotencyKey: 'k1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } }),
      call(3, { arguments: { text: 'order' }, name: 'echo' }),
      call(-4, { name: 'echo', arguments: { text: 'ü 中 \u2028' } }),
    ],
  ],
  [
    'errors of each kind: unknown tool, internal, tool error, a supervisor that throws',
    [INITIALIZE(), INITIALIZED, call(1, { name: 'nope', arguments: {} }), call(2, { name: 'internal' }), call(3, { name: 'tool_error' }), call(4, { name: 'throws' })],
  ],
  [
    'results the fast path does not know by heart: rich blocks, reordered keys, an invalid block',
    [INITIALIZE(), INITIALIZED, call(1, { name: 'rich' }), call(2, { name: 'text_first' }), call(3, { name: 'bad_result' })],
  ],
  [
    'requests the SDK must judge: unknown params, wrong types, reserved _meta, a bad progress token',
    [
      INITIALIZE(),
      INITIALIZED,
      call(1, { name: 'echo', arguments: {}, task: { ttl: 1000 } }),
      call(2, { name: 'echo', arguments: {}, extra: true }),
      call(3, { name: 7 }),
      call(4, {}),
      { send: { jsonrpc: '2.0', id: 5, method: 'tools/call' }, answered: 5 },
      refused(6, { name: 'echo', _meta: { progressToken: 1.5 } }),
      refused(7, { name: 'echo', _meta: { progressToken: 2 ** 60 } }),
      call(8, { name: 'echo', arguments: {}, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } }),
      call(9, { name: 'echo', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }),
      refused(10, { name: 'echo', _meta: null }),
      call(11, { name: 'echo', arguments: {}, requestState: 'x' }),
      refused(12, { name: 'echo', arguments: {} }, { extra: 1 }),
      refused('t', { name: 'echo', _meta: { progressToken: true } }),
      refused('o', { name: 'echo', _meta: { progressToken: {} } }),
      refused('rt', { name: 'echo', _meta: { 'io.modelcontextprotocol/related-task': { taskId: 1 } } }),
      { send: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 }, extra: 1 } },
      { send: [{ jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'echo' } }], answered: null as never },
      call(14, { name: 'echo', arguments: { text: 'still served' } }),
    ],
  ],
  ['a call before initialize', [call(1, { name: 'echo', arguments: { text: 'early' } }), INITIALIZE(), INITIALIZED, call(2, { name: 'echo' })]],
  [
    'progress: string and integer tokens, the answer after its progress',
    [INITIALIZE(), INITIALIZED, call(1, { name: 'steps', _meta: { progressToken: 'p-1' } }), call(2, { name: 'steps', _meta: { progressToken: 42 } }), call(3, { name: 'steps' })],
  ],
  [
    'lifecycle log messages once logging/setLevel asked, at the level asked',
    [
      INITIALIZE(),
      INITIALIZED,
      call(1, { name: 'echo' }),
      { send: { jsonrpc: '2.0', id: 'lvl', method: 'logging/setLevel', params: { level: 'info' } }, answered: 'lvl' },
      call(2, { name: 'echo' }),
      call(3, { name: 'tool_error' }),
      { send: { jsonrpc: '2.0', id: 'lvl2', method: 'logging/setLevel', params: { level: 'warning' } }, answered: 'lvl2' },
      call(4, { name: 'echo' }),
    ],
  ],
  [
    'cancel: nothing more is sent for the call, the connection serves on',
    [
      INITIALIZE(),
      INITIALIZED,
      { send: { jsonrpc: '2.0', id: 50, method: 'tools/call', params: { name: 'wait', _meta: { progressToken: 'w' } } } },
      { until: 'wait-started' },
      { send: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 50, reason: 'user stop' } } },
      { until: 'wait-aborted' },
      call(51, { name: 'echo' }),
    ],
  ],
  [
    'cancel with an envelope key in its _meta (the SDK lifts it) and a string id',
    [
      INITIALIZE(),
      INITIALIZED,
      { send: { jsonrpc: '2.0', id: 'w-1', method: 'tools/call', params: { name: 'wait' } } },
      { until: 'wait-started' },
      { send: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'w-1', _meta: { 'io.modelcontextprotocol/logLevel': 'info' } } } },
      { until: 'wait-aborted' },
      call(2, { name: 'echo' }),
    ],
  ],
  [
    'a cancel the SDK refuses leaves the call running (shutdown answers it)',
    [
      INITIALIZE(),
      INITIALIZED,
      { send: { jsonrpc: '2.0', id: 60, method: 'tools/call', params: { name: 'wait' } } },
      { until: 'wait-started' },
      { send: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 60, reason: 5 } } },
      { send: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 60, _meta: { progressToken: 0.5 } } } },
      call(61, { name: 'echo' }),
    ],
  ],
  [
    'order within one read: a setLevel just before a call, messages queued for the SDK before a call, a cancel just after its call',
    [
      INITIALIZE(),
      INITIALIZED,
      {
        chunk: [
          { jsonrpc: '2.0', id: 'lvl', method: 'logging/setLevel', params: { level: 'info' } },
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'logged' } } },
        ],
        answered: ['lvl', 1],
      },
      {
        chunk: [
          { jsonrpc: '2.0', id: 'p1', method: 'ping' },
          { jsonrpc: '2.0', id: 'p2', method: 'ping' },
          { jsonrpc: '2.0', id: 'l', method: 'tools/list' },
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'behind' } } },
          { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'behind too' } } },
        ],
        answered: ['p1', 'p2', 'l', 2, 3],
      },
      {
        chunk: [
          { jsonrpc: '2.0', id: 70, method: 'tools/call', params: { name: 'wait', arguments: {} } },
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 70 } },
          { jsonrpc: '2.0', id: 71, method: 'tools/call', params: { name: 'echo', arguments: {} } },
        ],
        answered: [71],
      },
      { until: 'wait-aborted' },
      call(72, { name: 'echo', arguments: {} }),
    ],
  ],
  ['approval without elicitation', [INITIALIZE(), INITIALIZED, call(1, { name: 'write_note', arguments: {} })]],
  [
    'approval by elicitation: accepted, then declined',
    [
      INITIALIZE({ elicitation: {} }),
      INITIALIZED,
      { send: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_note' } } },
      { elicit: 'accept' },
      { send: { jsonrpc: '2.0', method: 'notifications/ping-less' } },
      call(2, { name: 'echo' }),
      { send: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'write_note' } } },
      { elicit: 'decline' },
      call(4, { name: 'echo' }),
    ],
  ],
  [
    'modern era on a raw line (the fast path stays off there)',
    [
      call(1, {
        name: 'echo',
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
      }),
      call(2, { name: 'echo', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }),
    ],
  ],
];

describe('the fast path writes what the SDK path writes', () => {
  it.each(CORPUS)(
    '%s',
    async (_name, steps) => {
      const viaSdk = await runRaw(false, steps);
      const viaFastPath = await runRaw(true, steps);
      expect(viaSdk.length).toBeGreaterThan(0);
      expect(viaFastPath).toEqual(viaSdk);
    },
    120_000,
  );

  // The session per client kind; every result, error and progress the client saw, plus the raw lines.
  async function clientSession(kind: ClientKind, callFastPath: boolean): Promise<{ seen: unknown[]; lines: string[] }> {
    const session = startSession(callFastPath);
    const client: TestClient = await connectClient(session.pair.client, { kind, elicit: () => ({ action: 'accept', content: { approve: true } }) });
    const seen: unknown[] = [];
    const settle = (promise: Promise<unknown>) =>
      promise.then(
        (value) => seen.push({ ok: value }),
        (error: { code?: unknown; message?: unknown; data?: unknown }) => seen.push({ error: { code: error.code, message: error.message, data: error.data } }),
      );
    try {
      await settle(client.callTool({ name: 'echo', arguments: { text: 'hi' } }));
      await settle(client.callTool({ name: 'nope', arguments: {} }));
      await settle(client.callTool({ name: 'tool_error', arguments: {} }));
      await settle(client.callTool({ name: 'internal', arguments: {} }));
      await settle(client.callTool({ name: 'rich', arguments: {} }));
      const progress: unknown[] = [];
      await settle(client.callTool({ name: 'steps', arguments: {} }, { onprogress: (event) => progress.push(event) }));
      seen.push({ progress });
      await settle(client.callTool({ name: 'write_note', arguments: {} }));
      const controller = new AbortController();
      const waiting = client.callTool({ name: 'wait', arguments: {} }, { signal: controller.signal });
      waiting.catch(() => undefined);
      await session.supervisor.waitStarted;
      controller.abort('user stop');
      await until(() => session.supervisor.requests.some((request) => request.name === 'wait' && request.control?.aborted === true), 'the wait call aborted');
      await settle(client.callTool({ name: 'echo', arguments: { text: 'after' } }));
    } finally {
      await client.close().catch(() => undefined);
    }
    return { seen, lines: session.lines };
  }

  it.each(CLIENT_KINDS)(
    'for a %s client: the same results, errors, progress and bytes',
    async (kind) => {
      const viaSdk = await clientSession(kind, false);
      const viaFastPath = await clientSession(kind, true);
      expect(viaSdk.seen).toHaveLength(9);
      expect(viaFastPath.seen).toEqual(viaSdk.seen);
      expect(viaFastPath.lines).toEqual(viaSdk.lines);
    },
    120_000,
  );
});

describe('the fast path takes the plain calls of a legacy connection, and only those', () => {
  /** How many tools/call requests reached the SDK's request dispatch. */
  function countSdkCalls(): () => number {
    type Dispatch = (this: unknown, request: { method: string }, ...rest: unknown[]) => void;
    const prototype = Server.prototype as unknown as { _onrequest: Dispatch };
    const onrequest = prototype._onrequest;
    let count = 0;
    vi.spyOn(prototype, '_onrequest').mockImplementation(function (this: unknown, request, ...rest) {
      if (request.method === 'tools/call') count++;
      return onrequest.call(this, request, ...rest);
    });
    return () => count;
  }

  it.each([
    ['legacy, fast path on', 'v2-legacy', true, 0],
    ['legacy, fast path off', 'v2-legacy', false, 3],
    ['modern (the SDK always)', 'v2-modern', true, 3],
  ] as const)('%s', async (_name, kind, callFastPath, reachingSdk) => {
    const sdkCalls = countSdkCalls();
    const session = startSession(callFastPath);
    const client = await connectClient(session.pair.client, { kind });
    for (const text of ['a', 'b', 'c']) expect((await client.callTool({ name: 'echo', arguments: { text } }))['structuredContent']).toEqual({ echoed: { text } });
    await client.close();
    expect(sdkCalls()).toBe(reachingSdk);
  });

  it.each([
    ['fast path: none (its cancel reaches the call control directly)', true],
    ["the SDK's path: its request's own", false],
  ] as const)('AbortControllers a call nobody cancels makes, %s', async (_name, callFastPath) => {
    const session = startSession(callFastPath);
    const initialize = INITIALIZE();
    session.send(initialize.send);
    await session.line((message) => message['id'] === initialize.answered, 'the answer to initialize');
    session.send(INITIALIZED.send);
    // A first call warms what is made once per connection.
    session.send({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'echo' } });
    await session.line((message) => message['id'] === 0, 'the answer to 0');
    try {
      const made = countAbortControllers();
      session.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'plain' } } });
      const answer = await session.line((message) => message['id'] === 1, 'the answer to 1');
      expect(answer).toMatchObject({ result: { structuredContent: { echoed: { text: 'plain' } } } });
      if (callFastPath) expect(made()).toBe(0);
      else expect(made()).toBeGreaterThan(0);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('a call with anything unusual goes to the SDK', async () => {
    const sdkCalls = countSdkCalls();
    const lines = await runRaw(true, [
      INITIALIZE(),
      INITIALIZED,
      call(1, { name: 'echo' }),
      call(2, { name: 'echo', task: { ttl: 1 } }),
      call(3, { name: 'echo', _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } }),
    ]);
    expect(lines).toHaveLength(4);
    expect(sdkCalls()).toBe(2);
  });
});

describe('lines the boundary refuses never reach either door', () => {
  it('a refused request or notification leaves the fast path taking the next plain calls', async () => {
    const sdkCalls = vi.spyOn(Server.prototype as unknown as { _onrequest: (...args: unknown[]) => void }, '_onrequest');
    const lines = await runRaw(true, [
      INITIALIZE(),
      INITIALIZED,
      refused(1, { name: 'echo', _meta: { progressToken: 1.5 } }),
      { send: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: null } } },
      call(2, { name: 'echo' }),
      call(3, { name: 'echo' }),
    ]);
    expect(lines.map((line) => (JSON.parse(line) as { id: unknown }).id)).toEqual(['init', 1, 2, 3]);
    // initialize only: the refused line went to neither, and calls 2 and 3 took the fast path.
    expect(sdkCalls.mock.calls.map(([request]) => (request as { method: string }).method)).toEqual(['initialize']);
  });
});

describe('the checks the fast path decides by', () => {
  const request = (params: unknown, extra: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params, ...extra }) as never;

  it('plainToolsCall takes name, arguments and a plain _meta, nothing else', () => {
    expect(plainToolsCall(request({ name: 'echo', arguments: { a: 1 }, _meta: { progressToken: 't', x: 1 } }))).toEqual({
      id: 1,
      params: { name: 'echo', arguments: { a: 1 }, _meta: { progressToken: 't', x: 1 } },
    });
    for (const params of [
      undefined,
      { name: 1 },
      { name: 'echo', task: {} },
      { name: 'echo', arguments: [] },
      { name: 'echo', _meta: [] },
      { name: 'echo', _meta: { progressToken: 1.5 } },
      { name: 'echo', _meta: { progressToken: true } },
      { name: 'echo', _meta: { 'io.modelcontextprotocol/clientInfo': {} } },
    ]) {
      expect(plainToolsCall(request(params))).toBeUndefined();
    }
    expect(plainToolsCall(request({ name: 'echo' }, { extra: 1 }))).toBeUndefined();
    expect(plainToolsCall({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'echo' } } as never)).toBeUndefined();
    expect(plainToolsCall({ jsonrpc: '2.0', id: 1, method: 'tools/list' } as never)).toBeUndefined();
  });

  it('cancelledRequestId follows the SDK schema of notifications/cancelled', () => {
    const cancel = (params: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params }) as never;
    expect(cancelledRequestId(cancel({ requestId: 3, reason: 'r' }))).toBe(3);
    expect(cancelledRequestId(cancel({ requestId: 's', other: 1, _meta: { 'io.modelcontextprotocol/logLevel': 'x' } }))).toBe('s');
    for (const params of [
      undefined,
      {},
      { requestId: 1.5 },
      { requestId: 1, reason: 2 },
      { requestId: 1, _meta: { progressToken: {} } },
      { requestId: 1, _meta: { 'io.modelcontextprotocol/related-task': {} } },
    ]) {
      expect(cancelledRequestId(cancel(params))).toBeUndefined();
    }
  });

  it('plainResultInWireOrder writes the keys as zod does, and declines what it does not know', () => {
    const result = { content: [{ type: 'text', text: 't' }], isError: true, _meta: { 'toolhost/error': { code: 'x' } }, structuredContent: { b: 1 } } as never;
    expect(JSON.stringify(plainResultInWireOrder(result))).toBe(
      '{"_meta":{"toolhost/error":{"code":"x"}},"content":[{"type":"text","text":"t"}],"structuredContent":{"b":1},"isError":true}',
    );
    for (const declined of [
      { content: [{ text: 't', type: 'text' }] },
      { content: [{ type: 'text', text: 't', annotations: {} }] },
      { content: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] },
      { content: [], _meta: { progressToken: 1 } },
      { content: [], _meta: JSON.parse('{"__proto__":{"x":1}}') as unknown },
      { content: [], resultType: 'complete' },
      { content: [], isError: 'yes' },
    ]) {
      expect(plainResultInWireOrder(declined as never)).toBeUndefined();
    }
  });
});
