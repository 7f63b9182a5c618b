// End to end through the real SDK clients over real stdio pipes: the built
// host with the e2e fixture tools, driven by a legacy-era client (SDK v1, and
// v2 pinned to the legacy era) and a modern-era client (v2, 2026-07-28), with
// and without the elicitation capability. Each SPEC section 5 code that a
// client can provoke is checked by its code and details.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KINDS, ensureBuilt, type ClientKind, type ElicitAnswerScript } from '../helpers/mcp-clients.js';
import { waitForMarkedProcesses, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { makeHostDirs, startClient, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

beforeAll(() => ensureBuilt(), 300_000);

const LISTED = ['bad_output', 'big_text', 'crash', 'echo', 'fails', 'flood', 'heap_hog', 'note_writer', 'progress_steps', 'sleeper', 'slow_writer', 'spin'];

/** [tool, arguments, expected code, details the error must carry, with the recovery of SPEC 5.2]. */
const ERROR_CASES: Array<[string, Record<string, unknown>, string, Record<string, unknown>]> = [
  ['echo', { text: 5 }, 'invalid_arguments', { recovery: 'repair' }],
  ['forbidden_shell', {}, 'policy_denied', { recovery: 'stop' }],
  ['unclassified', {}, 'unclassified_tool', { recovery: 'stop' }],
  ['note_writer', { text: 'hello' }, 'approval_required', { recovery: 'stop' }],
  // spin is read_only, so idempotent: a timeout may be retried.
  ['spin', {}, 'timeout', { recovery: 'retry' }],
  ['fails', {}, 'tool_error', { recovery: 'repair' }],
  ['heap_hog', {}, 'memory_limit', { recovery: 'repair' }],
  ['bad_output', {}, 'invalid_output', { recovery: 'repair' }],
  ['crash', {}, 'tool_crashed', { recovery: 'retry' }],
  ['flood', {}, 'output_limit', { recovery: 'repair' }],
];

describe.each(CLIENT_KINDS)('%s client without elicitation', (kind: ClientKind) => {
  let dirs: HostDirs;
  let client: HostClient;
  const logs: Array<{ level: string; logger?: string; data: unknown }> = [];

  beforeAll(async () => {
    dirs = makeHostDirs();
    client = await startClient(dirs, { kind, onLog: (params) => logs.push(params) });
  });
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  });

  it('speaks the expected era', () => {
    const era = 'getProtocolEra' in client.raw ? client.raw.getProtocolEra() : 'legacy';
    expect(era).toBe(kind === 'v2-modern' ? 'modern' : 'legacy');
  });

  it('lists the listed tools in name order, with annotations derived from the class', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool['name'])).toEqual(LISTED);
    const byName = new Map(tools.map((tool) => [tool['name'], tool]));
    expect(byName.get('echo')!['annotations']).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(byName.get('note_writer')!['annotations']).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(byName.get('echo')!['inputSchema']).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
  });

  it('calls a tool: an object result is structuredContent plus its JSON as text', async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi', n: 2 } });
    expect(result['isError']).toBeFalsy();
    expect(result['structuredContent']).toEqual({ echo: { text: 'hi', n: 2 } });
    const content = result['content'] as Array<{ type: string; text: string }>;
    expect(JSON.parse(content[0]!.text)).toEqual({ echo: { text: 'hi', n: 2 } });
  });

  it.each(ERROR_CASES)('%s %j fails with %s', async (name, args, code, details) => {
    const result = await client.callTool({ name, arguments: args });
    const error = wireErrorOf(result);
    expect(error.code).toBe(code);
    expect(error).toMatchObject(details);
  });

  it('names the rule of a policy denial', async () => {
    const error = wireErrorOf(await client.callTool({ name: 'forbidden_shell', arguments: {} }));
    expect(String(error['rule'])).toContain('tools.deny');
  });

  it('answers an unknown tool with JSON-RPC -32602 and the available tools', async () => {
    const failure = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(
      () => undefined,
      (error: unknown) => error as { code?: number; data?: unknown },
    );
    expect(failure?.code).toBe(-32602);
    expect(failure?.data).toEqual({ code: 'unknown_tool', available: LISTED, recovery: 'repair' });
  });

  it('stores a large result as an artifact: a bounded preview, a resource_link, the whole bytes by resources/read', async () => {
    const result = await client.callTool({ name: 'big_text', arguments: { bytes: 50_000 } });
    expect(result['isError']).toBeFalsy();
    expect(result['structuredContent']).toBeUndefined();
    const content = result['content'] as Array<Record<string, unknown>>;
    const preview = content.find((block) => block['type'] === 'text') as { text: string };
    const link = content.find((block) => block['type'] === 'resource_link') as { uri: string; mimeType: string };
    expect(Buffer.byteLength(preview.text)).toBeLessThanOrEqual(1024);
    expect(link.uri).toMatch(/^toolhost:\/\/artifacts\/[0-9a-f]{64}$/);
    const read = await client.readResource(link.uri);
    const whole = read.contents[0] as { text?: string; blob?: string };
    const text = whole.text ?? Buffer.from(whole.blob ?? '', 'base64').toString('utf8');
    expect(Buffer.byteLength(text)).toBe(50_000);
    expect(text.startsWith(preview.text.slice(0, 100))).toBe(true);
  });

  it('forwards progress to a client that asked for it', async () => {
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await client.callTool({ name: 'progress_steps', arguments: {} }, { onprogress: (event) => progress.push(event) });
    expect(result['structuredContent']).toEqual({ done: true });
    expect(progress.map((event) => [event.progress, event.total, event.message])).toEqual([
      [1, 3, 'one'],
      [2, 3, 'two'],
      [3, 3, 'three'],
    ]);
  });

  it('sends lifecycle events as log messages only once asked (legacy: logging/setLevel; modern: the request names a logLevel)', async () => {
    const unasked = logs.length;
    await client.callTool({ name: 'echo', arguments: {} });
    // A call's events are written before its answer: none of them can arrive later.
    expect(logs.length).toBe(unasked);
    if (kind !== 'v2-modern') await (client.raw as { setLoggingLevel(level: string): Promise<unknown> }).setLoggingLevel('info');
    const before = logs.length;
    const meta = kind === 'v2-modern' ? { _meta: { 'io.modelcontextprotocol/logLevel': 'info' } } : {};
    await client.callTool({ name: 'echo', arguments: {}, ...meta });
    const deadline = Date.now() + 30_000;
    while (logs.length < before + 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const types = logs.slice(before).map((log) => (log.data as { type?: string }).type);
    expect(types).toEqual(['tool.started', 'tool.completed']);
  });

  it('cancellation mid-call kills the tool process and its detached grandchild', async () => {
    const marker = `${dirs.marker}-sleeper-${kind}`;
    const controller = new AbortController();
    const call = client.callTool({ name: 'sleeper', arguments: { marker } }, { signal: controller.signal });
    const outcome = call.then(
      () => 'answered',
      () => 'rejected',
    );
    // Readiness from /proc: the tool and its grandchild both carry the marker.
    expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);
    controller.abort('the user pressed stop');
    expect(await outcome).toBe('rejected');
    expect(await waitForNoMarkedProcesses(marker)).toEqual([]);
    // The session goes on.
    const after = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    expect(after['structuredContent']).toEqual({ echo: { text: 'still here' } });
  });
});

describe.each(CLIENT_KINDS)('%s client with elicitation', (kind: ClientKind) => {
  let dirs: HostDirs;
  let client: HostClient;
  const answers: Array<ReturnType<ElicitAnswerScript>> = [];
  const asked: Array<{ message: string; requestedSchema: unknown }> = [];

  beforeAll(async () => {
    dirs = makeHostDirs();
    client = await startClient(dirs, {
      kind,
      elicit: (request) => {
        asked.push(request);
        return answers.shift() ?? { action: 'cancel' };
      },
    });
  });
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  });

  it('an approved call runs, after one question with the approve schema naming the tool', async () => {
    answers.push({ action: 'accept', content: { approve: true } });
    const before = asked.length;
    const result = await client.callTool({ name: 'note_writer', arguments: { text: 'ship it' } });
    expect(result['isError']).toBeFalsy();
    expect(result['structuredContent']).toEqual({ written: 'ship it' });
    const questions = asked.slice(before);
    expect(questions).toHaveLength(1);
    expect(questions[0]!.message).toContain('note_writer');
    expect(questions[0]!.requestedSchema).toMatchObject({ type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] });
  });

  it.each([
    ['declined', { action: 'decline' as const }],
    ['cancelled', { action: 'cancel' as const }],
    ['accepted without approving', { action: 'accept' as const, content: { approve: false } }],
  ])('a %s approval is approval_denied', async (_name, answer) => {
    answers.push(answer);
    const error = wireErrorOf(await client.callTool({ name: 'note_writer', arguments: { text: 'no' } }));
    expect(error.code).toBe('approval_denied');
    expect(error['recovery']).toBe('stop');
  });

  it('a read-only call asks nothing', async () => {
    const before = asked.length;
    await client.callTool({ name: 'echo', arguments: {} });
    expect(asked.length).toBe(before);
  });
});

describe('session limits', () => {
  it('the call after the budget is call_limit', async () => {
    const dirs = makeHostDirs({ policy: 'kind: Policy\nname: tight\nlimits:\n  maxCallsPerSession: 2\n' });
    const client = await startClient(dirs, { kind: 'v2-legacy' });
    try {
      for (let call = 0; call < 2; call++) expect((await client.callTool({ name: 'echo', arguments: {} }))['isError']).toBeFalsy();
      const error = wireErrorOf(await client.callTool({ name: 'echo', arguments: {} }));
      expect(error.code).toBe('call_limit');
      expect(error).toMatchObject({ limit: 2, recovery: 'stop' });
    } finally {
      await stopClient(client, dirs);
      dirs.cleanup();
    }
  });
});
