// The MCP client's Transport over an upstream server's stdio pipes, as the
// spawner handed them over: newline-delimited JSON-RPC, every line bounded in
// bytes before it is decoded (a server cannot make the host buffer more than
// `maxMessageBytes`), strict UTF-8, one JSON value per line. Anything else is a
// protocol fault the owner turns into a stable outcome (the instance is killed).
// A response that follows a notification in the same read is delivered one
// macrotask later: the SDK handles notifications a microtask after delivery but
// responses at once, and drops a request's progress handler with its response,
// so the server's last progress before its answer would otherwise be lost.
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { LineSplitter } from '../process/ndjson.js';
import { decodeUtf8Strict } from '../process/output-cap.js';
import { isRecord } from '../../config/guards.js';

/** Why the server's output stopped being MCP, or (`stdin_not_read`) why it stopped taking input. */
export type PipeFault = 'message_too_large' | 'invalid_utf8' | 'not_json' | 'not_json_rpc' | 'stdin_not_read';

/**
 * Bytes the host may hold for a server that does not read its stdin (requests, large
 * arguments, answers to its own requests) before it is killed: above the largest single
 * message a client may send the host (16 MiB), so one large argument to a slow reader passes.
 */
const MAX_QUEUED_TO_SERVER_BYTES = 32 * 1024 * 1024;

export class PipeClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  #isClosed = false;
  /** The input ended: close once the queue is delivered. */
  #isEnding = false;
  /** Parsed messages not delivered yet (a response waits for the notification before it). */
  #queue: JSONRPCMessage[] = [];
  #isDrainScheduled = false;
  readonly #lines: LineSplitter;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    maxMessageBytes: number,
    /** Called once, on the first line that is not a JSON-RPC message (nothing more is read) or an input it does not read. */
    private readonly onFault: (fault: PipeFault) => void,
    private readonly maxQueuedBytes: number = MAX_QUEUED_TO_SERVER_BYTES,
  ) {
    this.#lines = new LineSplitter(maxMessageBytes);
  }

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => this.#read(chunk));
    this.input.once('close', () => this.#ended());
    this.input.once('end', () => this.#ended());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#isClosed || this.output.destroyed) throw new Error('the upstream server is gone');
    this.output.write(`${JSON.stringify(message)}\n`);
    // What the server has not read stays in the host: bounded, not a reason to grow.
    if (this.output.writableLength > this.maxQueuedBytes) {
      this.#fault('stdin_not_read');
      throw new Error('the upstream server does not read its input');
    }
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
      this.#queue.push(message);
    }
    if (!this.#isDrainScheduled) this.#drain();
  }

  // Delivers the queue in order; a response right after a notification waits one macrotask.
  #drain(): void {
    this.#isDrainScheduled = false;
    let hasNotified = false;
    while (this.#queue.length > 0 && !this.#isClosed) {
      const next = this.#queue[0] as JSONRPCMessage;
      const isResponse = !('method' in next);
      if (hasNotified && isResponse) {
        this.#isDrainScheduled = true;
        // A server far ahead of the host waits in the pipe, not in this queue.
        if (this.#queue.length > MAX_QUEUED_MESSAGES) this.input.pause();
        setImmediate(() => this.#drain());
        return;
      }
      this.#queue.shift();
      if (!('id' in next)) hasNotified = true;
      this.onmessage?.(next);
    }
    this.input.resume();
    if (this.#isEnding) this.#closed();
  }

  #ended(): void {
    this.#isEnding = true;
    if (!this.#isDrainScheduled) this.#closed();
  }

  #fault(fault: PipeFault): void {
    if (this.#isClosed) return;
    this.input.removeAllListeners('data');
    // What was queued for the server is dropped now, not when its process is gone.
    if (fault === 'stdin_not_read') this.output.destroy();
    this.#queue = [];
    this.onFault(fault);
    this.#closed();
  }

  #closed(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.onclose?.();
  }
}

/** Messages parsed ahead of delivery before the pipe is paused. */
const MAX_QUEUED_MESSAGES = 1024;

function isJsonRpc(value: unknown): value is JSONRPCMessage {
  return isRecord(value) && value['jsonrpc'] === '2.0';
}
