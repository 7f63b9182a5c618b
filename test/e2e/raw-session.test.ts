// A whole session in raw JSON-RPC lines against the built host: malformed
// lines answered with their ids, progress, a cancelled call after which
// nothing more is sent for it, and then EVERY stdout line parsed as JSON-RPC
// (stdout carries protocol only; logs go to stderr).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteJournal as Journal } from '../../src/audit/sqlite/sqlite-journal.js';
import { hashArgs } from '../../src/audit/hash.js';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForMarkedProcesses, waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { collectOutput, makeHostDirs, spawnRawHost, until, waitForExit, type HostDirs, type RawHost } from '../helpers/host-session.js';

const MAX_MESSAGE_BYTES = 65_536;

type Message = {
  jsonrpc?: unknown;
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; data?: Record<string, unknown> };
};

describe('a raw session', () => {
  let dirs: HostDirs;
  let host: RawHost;
  let output: ReturnType<typeof collectOutput>;
  const parsed = (): Message[] => output.lines.map((line) => JSON.parse(line) as Message);
  const answerTo = async (id: unknown): Promise<Message> => {
    await until(() => parsed().some((message) => message.id === id && message.method === undefined), `the answer to ${String(id)}`);
    return parsed().find((message) => message.id === id && message.method === undefined)!;
  };
  const send = (line: string | Buffer): void => {
    host.stdin.write(Buffer.concat([typeof line === 'string' ? Buffer.from(line) : line, Buffer.from('\n')]));
  };
  const request = (id: number | string, method: string, params?: unknown): void =>
    send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) }));

  beforeAll(async () => {
    await ensureBuilt();
    dirs = makeHostDirs({ extraArgs: ['--max-message-bytes', String(MAX_MESSAGE_BYTES)] });
    host = spawnRawHost(dirs);
    output = collectOutput(host);
    request(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    await answerTo(1);
    send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  }, 300_000);
  afterAll(async () => {
    host.kill('SIGKILL');
    await waitForNoMarkedProcesses(dirs.marker);
    dirs.cleanup();
  });

  it.each([
    ['not JSON', Buffer.from('{"jsonrpc":"2.0","id":"m1","method":"tools/list"'), 'm1', -32700, 'invalid_json'],
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"m2","method":"tools/list","params":{"_meta":{"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}}')]),
      'm2',
      -32600,
      'invalid_utf8',
    ],
    [
      'duplicate keys',
      Buffer.from('{"jsonrpc":"2.0","id":"m3","method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}'),
      'm3',
      -32600,
      'duplicate_key',
    ],
    [
      'too deep',
      Buffer.from(`{"jsonrpc":"2.0","id":"m4","method":"tools/call","params":{"name":"echo","arguments":{"x":${'['.repeat(80)}${']'.repeat(80)}}}}`),
      'm4',
      -32600,
      'too_deep',
    ],
    [
      'too big',
      Buffer.from(`{"jsonrpc":"2.0","id":"m5","method":"tools/call","params":{"name":"echo","arguments":{"text":"${'a'.repeat(MAX_MESSAGE_BYTES)}"}}}`),
      'm5',
      -32600,
      'too_large',
    ],
    ['arguments not an object', Buffer.from('{"jsonrpc":"2.0","id":"m6","method":"tools/call","params":{"name":"echo","arguments":[]}}'), 'm6', -32600, 'arguments_not_object'],
    // What runs is what was sent: the SDK's parsing would drop the key and run {"text":"a"}.
    [
      'a __proto__ key in the arguments',
      Buffer.from('{"jsonrpc":"2.0","id":"m7","method":"tools/call","params":{"name":"echo","arguments":{"text":"a","__proto__":{"n":"notint"}}}}'),
      'm7',
      -32600,
      'proto_key',
    ],
  ])('%s is answered with the request id', async (_name, line, id, code, reason) => {
    send(line);
    const answer = await answerTo(id);
    expect(answer.error?.code).toBe(code);
    expect(answer.error?.data).toMatchObject({ code: 'malformed_request', reason });
  });

  it('journals the hash of the arguments that were sent, and never ran the __proto__ call', async () => {
    const sent = '{"text":"h\\u00e9llo","n":7}';
    send(`{"jsonrpc":"2.0","id":"h1","method":"tools/call","params":{"name":"echo","arguments":${sent}}}`);
    expect((await answerTo('h1')).result?.['isError']).toBeUndefined();
    const echoes = () => {
      const journal = Journal.open(dirs.stateDir, { asHost: false });
      try {
        return journal.query({ tool: 'echo' });
      } finally {
        journal.close();
      }
    };
    // A read-only call's record is committed in a batch a few ms after its answer.
    await until(() => echoes().length > 0, 'the record of the echo call');
    expect(echoes().map((record) => record.argsHash)).toEqual([hashArgs(JSON.parse(sent))]);
  });

  it('serves the next request after malformed ones', async () => {
    request(5, 'tools/list');
    const answer = await answerTo(5);
    expect((answer.result?.['tools'] as unknown[]).length).toBeGreaterThan(0);
  });

  it('sends notifications/progress for a request with a progressToken', async () => {
    request(6, 'tools/call', { name: 'progress_steps', arguments: {}, _meta: { progressToken: 'p6' } });
    await answerTo(6);
    const progress = parsed().filter((message) => message.method === 'notifications/progress' && message.params?.['progressToken'] === 'p6');
    expect(progress.map((message) => message.params?.['progress'])).toEqual([1, 2, 3]);
  });

  it('after notifications/cancelled nothing more is sent for that request, and its processes are gone', async () => {
    const marker = `${dirs.marker}-cancel`;
    request(7, 'tools/call', { name: 'sleeper', arguments: { marker }, _meta: { progressToken: 'p7' } });
    expect((await waitForMarkedProcesses(marker, 2)).length).toBe(2);
    send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'user stop' } }));
    expect(await waitForNoMarkedProcesses(marker)).toEqual([]);
    // Later traffic is answered; by then anything about request 7 would have been written.
    request(8, 'tools/call', { name: 'echo', arguments: { text: 'after' } });
    await answerTo(8);
    const aboutSeven = parsed().filter(
      (message) =>
        (message.id === 7 && message.method === undefined) ||
        message.params?.['progressToken'] === 'p7' ||
        (message.method === 'notifications/message' &&
          (message.params?.['data'] as { tool?: string; type?: string } | undefined)?.tool === 'sleeper' &&
          (message.params?.['data'] as { type?: string }).type !== 'tool.started'),
    );
    expect(aboutSeven).toEqual([]);
  });

  it('ends on stdin EOF with exit code 0; every stdout line of the session is JSON-RPC', async () => {
    host.stdin.end();
    const exit = await waitForExit(host);
    expect(exit).toEqual({ code: 0, signal: null });
    const raw = output.rawStdout().toString('utf8');
    expect(raw.endsWith('\n')).toBe(true);
    const lines = raw.split('\n').slice(0, -1);
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) {
      const message = JSON.parse(line) as Message;
      expect(message.jsonrpc).toBe('2.0');
      const isResponse = 'id' in message && message.method === undefined && ('result' in message || 'error' in message);
      const isNotificationOrRequest = typeof message.method === 'string';
      expect(isResponse || isNotificationOrRequest).toBe(true);
    }
    // Logs went to stderr, as pino JSON lines.
    const logLines = output
      .stderr()
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(JSON.parse(line)).toHaveProperty('msg');
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
  });
});
