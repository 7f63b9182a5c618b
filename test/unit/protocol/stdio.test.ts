import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { BoundaryStdioTransport, ProtocolOutput } from '../../../src/protocol/stdio.js';
import { recordingLogger } from '../../helpers/recording-logger.js';

function capture(stream: PassThrough): () => string {
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return () => text;
}

describe('ProtocolOutput', () => {
  it('writes one JSON line per message, in call order', async () => {
    const stdout = new PassThrough();
    const read = capture(stdout);
    const output = new ProtocolOutput(stdout, createSilentLogger());
    await Promise.all([output.writeMessage({ jsonrpc: '2.0', id: 1, result: {} }), output.writeMessage({ jsonrpc: '2.0', method: 'x' })]);
    expect(read()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","method":"x"}\n');
  });

  it('the lines of one turn go out in one write, in call order; each promise resolves once it is written', async () => {
    const stdout = new PassThrough();
    const chunks: string[] = [];
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
    const output = new ProtocolOutput(stdout, createSilentLogger());
    const first = [1, 2, 3].map((id) => output.writeMessage({ jsonrpc: '2.0', id, result: {} }));
    await Promise.all(first);
    await output.writeMessage({ jsonrpc: '2.0', id: 4, result: {} });
    expect(chunks).toEqual([
      '{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n{"jsonrpc":"2.0","id":3,"result":{}}\n',
      '{"jsonrpc":"2.0","id":4,"result":{}}\n',
    ]);
  });

  it('the lines of one callback are written once it is over, without waiting for another turn of the loop', async () => {
    const stdout = new PassThrough();
    const chunks: string[] = [];
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
    const output = new ProtocolOutput(stdout, createSilentLogger());
    void output.writeMessage({ jsonrpc: '2.0', id: 1, result: {} });
    void output.writeMessage({ jsonrpc: '2.0', id: 2, result: {} });
    expect(chunks).toEqual([]);
    // A tick queued after the writes runs after the write (setImmediate would still be waiting).
    await new Promise((resolve) => process.nextTick(resolve));
    expect(chunks).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n']);
  });

  it('the writers of one write share one promise; the next turn gets a new one', async () => {
    const stdout = new PassThrough();
    const output = new ProtocolOutput(stdout, createSilentLogger());
    const first = output.writeMessage({ jsonrpc: '2.0', id: 1, result: {} });
    expect(output.writeMessage({ jsonrpc: '2.0', id: 2, result: {} })).toBe(first);
    await first;
    const next = output.writeMessage({ jsonrpc: '2.0', id: 3, result: {} });
    expect(next).not.toBe(first);
    await next;
  });

  it('a message that cannot be serialized rejects its own promise, not the others of its write', async () => {
    const stdout = new PassThrough();
    const read = capture(stdout);
    const output = new ProtocolOutput(stdout, createSilentLogger());
    const transport = new BoundaryStdioTransport({ input: new PassThrough(), output, maxMessageBytes: 64, logger: createSilentLogger() });
    const good = output.writeMessage({ jsonrpc: '2.0', id: 1, result: {} });
    const bad = transport.send({ jsonrpc: '2.0', id: 2, result: { n: 1n } } as never);
    await expect(bad).rejects.toThrow(TypeError);
    await good;
    expect(read()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n');
  });

  it('a broken stream rejects the lines waiting for their write', async () => {
    const stdout = new PassThrough();
    const output = new ProtocolOutput(stdout, createSilentLogger());
    const waiting = output.writeMessage({ jsonrpc: '2.0', id: 1, result: {} });
    stdout.emit('error', new Error('EPIPE'));
    await expect(waiting).rejects.toThrow('the protocol output is closed');
    await expect(output.writeMessage({ jsonrpc: '2.0', id: 2, result: {} })).rejects.toThrow('the protocol output is closed');
  });

  it('after guard(), other writes to the stream go to stderr; protocol lines still reach stdout', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const readOut = capture(stdout);
    const readErr = capture(stderr);
    const output = new ProtocolOutput(stdout, createSilentLogger());
    output.guard(stderr);
    stdout.write('a stray console.log\n');
    await output.writeMessage({ jsonrpc: '2.0', id: 2, result: {} });
    expect(readOut()).toBe('{"jsonrpc":"2.0","id":2,"result":{}}\n');
    expect(readErr()).toBe('a stray console.log\n');
  });
});

describe('BoundaryStdioTransport', () => {
  function setup() {
    const input = new PassThrough();
    const stdout = new PassThrough();
    const logger = createSilentLogger();
    const transport = new BoundaryStdioTransport({ input, output: new ProtocolOutput(stdout, logger), maxMessageBytes: 64, logger });
    const messages: unknown[] = [];
    transport.onmessage = (message) => messages.push(message);
    return { input, transport, messages, read: capture(stdout) };
  }

  it('hands well-formed lines to the SDK and answers malformed ones itself', async () => {
    const { input, transport, messages, read } = setup();
    await transport.start();
    input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"id":3}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(JSON.parse(read())).toMatchObject({ id: 3, error: { code: -32600, data: { code: 'malformed_request', reason: 'duplicate_key' } } });
  });

  it('a line the SDK would drop: a request is answered with its id, a notification only logged at warn; neither reaches the SDK', async () => {
    const input = new PassThrough();
    const stdout = new PassThrough();
    const log = recordingLogger();
    const transport = new BoundaryStdioTransport({ input, output: new ProtocolOutput(stdout, log.logger), maxMessageBytes: 1024, logger: log.logger });
    const messages: unknown[] = [];
    transport.onmessage = (message) => messages.push(message);
    const read = capture(stdout);
    await transport.start();
    input.write(
      [
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"_meta":{"progressToken":0.5}}}',
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":null}}',
        '{"jsonrpc":"2.0","id":8,"method":"ping"}',
        '',
      ].join('\n'),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 8, method: 'ping' }]);
    const written = read()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: unknown; error: { code: number; data: unknown } });
    expect(written.map(({ id, error }) => ({ id, code: error.code, data: error.data }))).toEqual([
      { id: 7, code: -32600, data: { code: 'malformed_request', reason: 'not_mcp_message', key: '/params/_meta', recovery: 'stop' } },
    ]);
    const warned = log.lines().filter((line) => line['level'] === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ code: 'malformed_request', reason: 'not_mcp_message', key: '/params/_meta/progressToken', method: 'notifications/cancelled' });
  });

  it('answers an oversized line as soon as it passes the cap, before its newline arrives', async () => {
    const { input, transport, messages, read } = setup();
    await transport.start();
    input.write(`{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"${'y'.repeat(100)}`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(JSON.parse(read())).toMatchObject({ id: 'big', error: { code: -32600, data: { reason: 'too_large', maxBytes: 64 } } });
    input.write('"}}\n{"jsonrpc":"2.0","id":4,"method":"ping"}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 4, method: 'ping' }]);
  });

  it('reports end of input through onInputEnd, or closes when nobody listens', async () => {
    const first = setup();
    let ended = 0;
    let closed = 0;
    first.transport.onInputEnd = () => ended++;
    first.transport.onclose = () => closed++;
    await first.transport.start();
    first.input.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect([ended, closed]).toEqual([1, 0]);

    const second = setup();
    second.transport.onclose = () => closed++;
    await second.transport.start();
    second.input.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(1);
    await expect(second.transport.send({ jsonrpc: '2.0', method: 'x' })).rejects.toThrow();
  });
});
