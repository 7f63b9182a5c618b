// The client transport over an upstream server's pipes, with the real SDK v2
// Client on top and a scripted server on the other end of the pipes.
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { PipeClientTransport, type PipeFault } from '../../../../src/runner/upstream/pipe-transport.js';

const INIT_RESULT = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'scripted', version: '1' } };

/** A Client connected to a scripted server: `answer` gets each request the client sends and writes raw bytes back. */
async function connect(answer: (request: Record<string, unknown>, write: (text: string) => void) => void) {
  const fromServer = new PassThrough();
  const toServer = new PassThrough();
  const faults: PipeFault[] = [];
  let pending = '';
  toServer.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
      const message = JSON.parse(pending.slice(0, nl)) as Record<string, unknown>;
      pending = pending.slice(nl + 1);
      if (message['method'] === 'initialize') fromServer.write(`${JSON.stringify({ jsonrpc: '2.0', id: message['id'], result: INIT_RESULT })}\n`);
      else if (message['id'] !== undefined) answer(message, (text) => fromServer.write(text));
    }
  });
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new PipeClientTransport(fromServer, toServer, 1 << 20, (fault) => faults.push(fault)));
  return { client, fromServer, faults };
}

describe('PipeClientTransport', () => {
  it('delivers the progress a server writes right before its answer, in the same chunk', async () => {
    const { client } = await connect((request, write) => {
      const token = (request['params'] as { _meta?: { progressToken?: unknown } })._meta?.progressToken;
      const progress = (n: number) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: n, total: 3 } });
      // One write: three progress notifications and the response, as a server's pipe often delivers them.
      write(`${progress(1)}\n${progress(2)}\n${progress(3)}\n${JSON.stringify({ jsonrpc: '2.0', id: request['id'], result: { content: [] } })}\n`);
    });
    const seen: number[] = [];
    await client.request({ method: 'tools/call', params: { name: 'x', arguments: {} } }, { onprogress: (progress) => seen.push(progress.progress) });
    expect(seen).toEqual([1, 2, 3]);
    await client.close();
  });

  it('delivers a response that arrives with the end of the pipe before it closes', async () => {
    const { client, fromServer } = await connect((request, write) => {
      write(
        `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'bye' } })}\n${JSON.stringify({ jsonrpc: '2.0', id: request['id'], result: { content: [{ type: 'text', text: 'last' }] } })}\n`,
      );
      fromServer.end();
    });
    const result = (await client.request({ method: 'tools/call', params: { name: 'x', arguments: {} } })) as { content: Array<{ text: string }> };
    expect(result.content[0]?.text).toBe('last');
  });

  it('a line that is not JSON-RPC is a fault, and nothing after it is delivered', async () => {
    const { client, faults } = await connect((request, write) => write(`not json\n${JSON.stringify({ jsonrpc: '2.0', id: request['id'], result: {} })}\n`));
    await expect(client.request({ method: 'tools/call', params: { name: 'x', arguments: {} } })).rejects.toThrow();
    expect(faults).toEqual(['not_json']);
  });
});
