// The stdio wire of `toolhost serve`: newline-delimited JSON-RPC on stdin and
// stdout. It owns stdout (nothing else may write protocol there) and runs the
// raw-line boundary checks before a message reaches the SDK.
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import { checkLine, refuseOversized, type MalformedResponse } from './boundary.js';
import { LineReader } from './line-reader.js';
import type { EarlyInitialize } from './early-initialize.js';
import type { HeldInput } from './stdio-early.js';

/**
 * The one writer of protocol lines. The lines written while one callback of the
 * event loop runs (the answers of the calls one journal commit closed together,
 * with 8 in flight) go out in one write when it is over: one system call, and one
 * wake-up of the client reading them, without waiting for another turn.
 */
export class ProtocolOutput {
  private broken = false;
  private readonly write: (chunk: string, callback: (error?: Error | null) => void) => boolean;
  /** The lines waiting for this turn's write; undefined when none is scheduled. */
  private batch: Batch | undefined;

  constructor(
    private readonly stream: Writable,
    private readonly logger: Logger,
  ) {
    // Bound before any guard replaces stream.write, so protocol lines keep the real writer.
    this.write = stream.write.bind(stream) as typeof this.write;
    stream.on('error', (error: Error) => {
      this.broken = true;
      this.logger.warn({ err: error.message }, 'stdout closed');
    });
  }

  /**
   * Writes one JSON-RPC message as a line, in this turn's write; resolves once the
   * stream took it (back-pressure respected). Write order is the call order. Every
   * line of a write shares one promise: they are written, or fail, together.
   */
  writeMessage(message: unknown): Promise<void> {
    if (this.broken) return Promise.reject(new Error('the protocol output is closed'));
    let json: string;
    try {
      json = JSON.stringify(message);
    } catch (error) {
      // A message that cannot be serialized fails its own promise only (never a throw: callers chain .catch).
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    let batch = this.batch;
    if (batch === undefined) {
      batch = this.batch = new Batch();
      // Once this callback and every promise it settled have run (a tick runs after the
      // microtask queue drains): the answers they produce join this write. Not setImmediate:
      // that held each answer for one more turn of the loop (a poll with its system call).
      process.nextTick(this.flush);
    }
    batch.lines.push(json);
    return batch.done;
  }

  private readonly flush = (): void => {
    const batch = this.batch!;
    this.batch = undefined;
    if (this.broken) {
      batch.fail(new Error('the protocol output is closed'));
      return;
    }
    const lines = batch.lines;
    const chunk = lines.length === 1 ? `${lines[0]!}\n` : `${lines.join('\n')}\n`;
    // The callback fires once the chunk is flushed or failed.
    this.write(chunk, (error) => {
      if (error) batch.fail(error);
      else batch.written();
    });
  };

  /**
   * From now on, any other write to this stream (a stray console.log, a library
   * banner) goes to stderr instead: stdout carries protocol messages only.
   */
  guard(stderr: Writable = process.stderr): void {
    let warned = false;
    const redirect = (chunk: unknown, ...rest: unknown[]): boolean => {
      const isEmpty = (typeof chunk === 'string' || chunk instanceof Uint8Array) && chunk.length === 0;
      if (!warned && !isEmpty) {
        warned = true;
        this.logger.warn('a write to stdout outside the protocol was redirected to stderr');
      }
      return (stderr.write as (chunk: unknown, ...rest: unknown[]) => boolean)(chunk, ...rest);
    };
    (this.stream as { write: unknown }).write = redirect;
  }
}

/** The lines of one write and the one promise their writers wait on. */
class Batch {
  readonly lines: string[] = [];
  readonly done: Promise<void>;
  written!: () => void;
  fail!: (error: Error) => void;

  constructor() {
    this.done = new Promise<void>((resolve, reject) => {
      this.written = resolve;
      this.fail = reject;
    });
  }
}

/** A client's method name is logged at most this long. */
const MAX_LOGGED_METHOD_CHARS = 200;

interface StdioTransportOptions {
  /** stdin itself, or serve's early front, which read it while the host was built (stdio-early.ts). */
  readonly input: Readable | HeldInput;
  readonly output: ProtocolOutput;
  readonly maxMessageBytes: number;
  readonly logger: Logger;
}

/**
 * An SDK Transport over a byte stream pair. Each inbound line is checked
 * (size, UTF-8, JSON syntax, duplicate keys, depth, JSON-RPC shape, what the
 * SDK would dispatch) and either answered with a malformed_request error here
 * (a refused notification is only logged) or handed to the SDK already parsed.
 */
export class BoundaryStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called once when the input reaches end-of-file. When unset, EOF closes the transport. */
  onInputEnd?: () => void;

  private readonly reader: LineReader;
  private started = false;
  private closed = false;
  /** An `initialize` the early front answered: the SDK answers it again when it is handed on, and that answer is not sent. */
  private answered: EarlyInitialize | undefined;

  constructor(private readonly options: StdioTransportOptions) {
    this.reader = new LineReader(options.maxMessageBytes, {
      line: (bytes) => this.handleLine(bytes),
      oversized: (prefix) => this.handleOversized(prefix),
    });
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('BoundaryStdioTransport already started');
    this.started = true;
    const { input } = this.options;
    if (isHeldInput(input)) {
      this.answered = input.answeredInitialize;
      // After this turn: the caller (serveToolhost) installs the fast path in front of onmessage first.
      setImmediate(() => {
        if (this.closed) return;
        input.release({
          line: (bytes) => this.handleLine(bytes),
          oversized: (prefix) => this.handleOversized(prefix),
          end: () => this.onEnd(),
          error: (error) => this.onInputError(error),
        });
      });
      return;
    }
    input.on('data', this.onData);
    input.on('end', this.onEnd);
    input.on('error', this.onInputError);
    input.resume();
  }

  /** The output's own promise, not an async wrapper around it: one promise and its ticks fewer per message. */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the transport is closed'));
    if (this.answered !== undefined && isAnswerTo(message, this.answered.id)) return this.dropSecondAnswer(message);
    return this.options.output.writeMessage(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const { input } = this.options;
    if (isHeldInput(input)) {
      input.stop();
    } else {
      input.off('data', this.onData);
      input.off('end', this.onEnd);
      input.off('error', this.onInputError);
      input.pause();
    }
    this.onclose?.();
  }

  /**
   * The SDK's answer to the `initialize` the early front answered already: the client has
   * its answer, so this one is not sent. The two must agree (a test holds them so); a
   * difference is a defect, logged.
   */
  private dropSecondAnswer(message: JSONRPCMessage): Promise<void> {
    const early = this.answered!;
    this.answered = undefined;
    const sdkResult = 'result' in message ? message.result : undefined;
    if (JSON.stringify(sdkResult) !== JSON.stringify(early.response.result)) {
      this.options.logger.error(
        { id: early.id, early: early.response.result, sdk: 'error' in message ? message.error : sdkResult },
        'the early initialize answer differs from the SDK answer',
      );
    }
    return Promise.resolve();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };

  private readonly onEnd = (): void => {
    this.reader.end();
    if (this.onInputEnd) this.onInputEnd();
    else void this.close();
  };

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  private handleOversized(prefix: Uint8Array): void {
    const check = refuseOversized(prefix, this.options.maxMessageBytes);
    if (!check.ok) this.answerMalformed(check.response);
  }

  private handleLine(bytes: Uint8Array): void {
    if (this.closed) return;
    const check = checkLine(bytes, this.options.maxMessageBytes);
    if (check.ok) {
      this.onmessage?.(check.message);
      return;
    }
    if (check.notification === undefined) this.answerMalformed(check.response);
    else this.logRefusedNotification(check.response, check.notification.method);
  }

  /** A notification is never answered (JSON-RPC); the operator still hears of it, once. */
  private logRefusedNotification(response: MalformedResponse, method: string): void {
    const { reason, key } = response.error.data;
    this.options.logger.warn(
      { code: 'malformed_request', reason, key, method: method.slice(0, MAX_LOGGED_METHOD_CHARS) },
      'notification refused: the MCP SDK would drop it; not answered (it is a notification)',
    );
  }

  private answerMalformed(response: MalformedResponse): void {
    this.options.logger.info({ code: 'malformed_request', reason: response.error.data.reason, id: response.id }, 'malformed request');
    if (this.closed) return;
    this.options.output.writeMessage(response).catch((error: unknown) => {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    });
  }
}

function isHeldInput(input: Readable | HeldInput): input is HeldInput {
  return 'release' in input;
}

/** A response (not a request of ours) addressed to `id`. */
function isAnswerTo(message: JSONRPCMessage, id: string | number): boolean {
  return !('method' in message) && 'id' in message && message.id === id;
}
