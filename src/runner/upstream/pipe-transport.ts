// The MCP client's Transport over an upstream server's stdio pipes, as the
// spawner handed them over: newline-delimited JSON-RPC, every line bounded in
// bytes before it is decoded (a server cannot make the host buffer more than
// `maxMessageBytes`), strict UTF-8, one JSON value per line. Anything else is a
// protocol fault the owner turns into a stable outcome (the instance is killed).
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { LineSplitter } from '../process/ndjson.js';
import { decodeUtf8Strict } from '../process/output-cap.js';

/** Why the server's output stopped being MCP. */
export type PipeFault = 'message_too_large' | 'invalid_utf8' | 'not_json' | 'not_json_rpc';

export class PipeClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  #isClosed = false;
  readonly #lines: LineSplitter;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    maxMessageBytes: number,
    /** Called once, on the first line that is not a JSON-RPC message; nothing more is read. */
    private readonly onFault: (fault: PipeFault) => void,
  ) {
    this.#lines = new LineSplitter(maxMessageBytes);
  }

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => this.#read(chunk));
    this.input.once('close', () => this.#closed());
    this.input.once('end', () => this.#closed());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#isClosed || this.output.destroyed) throw new Error('the upstream server is gone');
    this.output.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    if (!this.output.destroyed) this.output.end();
    this.#closed();
  }

  #read(chunk: Buffer): void {
    if (this.#isClosed) return;
    const lines = this.#lines.push(chunk);
    if (lines === 'overflow') return this.#fault('message_too_large');
    for (const line of lines) {
      if (this.#isClosed) return;
      const text = decodeUtf8Strict(line);
      if (text === undefined) return this.#fault('invalid_utf8');
      if (text.trim() === '') continue;
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return this.#fault('not_json');
      }
      if (!isJsonRpc(message)) return this.#fault('not_json_rpc');
      this.onmessage?.(message);
    }
  }

  #fault(fault: PipeFault): void {
    this.input.removeAllListeners('data');
    this.onFault(fault);
    this.#closed();
  }

  #closed(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.onclose?.();
  }
}

function isJsonRpc(value: unknown): value is JSONRPCMessage {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as Record<string, unknown>)['jsonrpc'] === '2.0';
}
