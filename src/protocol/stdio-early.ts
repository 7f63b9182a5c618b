// serve's early front on stdio: it reads stdin from the first moment, while the
// host (manifests, policy, journal, sandbox services, the MCP SDK) is still
// being built, answers an opening `initialize` at once (early-initialize.ts),
// and holds every other line, in order, until the transport takes over
// (BoundaryStdioTransport with this as its input), which then checks and
// dispatches them as it does any line. A client cancelling a request still held
// gets what it asked for: the request never runs and is never answered. The
// held lines have a byte cap: a request past it is answered at once with
// `internal` (reason queue_full), a notification past it is dropped. When the
// host fails to start, every held request, and any request that arrives until
// the process exits, is answered with an error that says so (fail()). While the
// answers it writes wait for a client that does not read, stdin waits too.
// A leaf of the start-up path: no SDK, no parser beyond json-scan, no logger
// (what it has to say is kept, bounded, until attachLogger).
import { writeSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import type { ProtocolChannel } from './protocol-fd.js';
import { errorData } from '../errors.js';
import { answerInitializeEarly, type EarlyInitialize, type ServerIdentity } from './early-initialize.js';
import { scanJson } from './json-scan.js';
import { LineReader, type LineSink } from './line-reader.js';
import { MAX_MESSAGE_DEPTH } from './message-limits.js';
import { isRecord } from '../config/guards.js';
import { recoverIdFromPrefix } from './line-id.js';
import { isRequestId } from './request-id.js';
import { JSONRPC_INTERNAL_ERROR } from './jsonrpc-codes.js';

/** Where the lines go once the transport takes over. */
interface HeldLineSink extends LineSink {
  /** The input reached end-of-file (after its last line). */
  end(): void;
  error(error: Error): void;
}

/** What BoundaryStdioTransport takes over from the early front. */
export interface HeldInput {
  /** The opening `initialize` already answered, if any: the SDK's own answer to it is not sent again. */
  readonly answeredInitialize: EarlyInitialize | undefined;
  /** Hands on the held lines, in order, then every later one, to `sink`. */
  release(sink: HeldLineSink): void;
  /** Stops reading. */
  stop(): void;
}

/** The JSON-RPC error for a request the early front answers itself. */
export interface EarlyError {
  readonly code: number;
  readonly message: string;
  readonly data: Record<string, unknown>;
}

/** The logger methods the early front's notes go to. */
interface NoteLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

interface EarlyStdioOptions {
  readonly input: Readable;
  /**
   * Moves the protocol off fd 1 (protocol-fd.ts). Called once the first line is handled
   * (its answer written), or when `channel` is first asked for, whichever comes first.
   */
  readonly takeChannel: () => Promise<ProtocolChannel>;
  /**
   * The descriptor the client reads (fd 1) while it is still that: lines written before
   * takeChannel is called go straight to it, so the `initialize` answer does not wait for
   * the channel (which may start a helper process). Absent: they wait for the channel.
   */
  readonly directFd?: number;
  readonly serverInfo: ServerIdentity;
  readonly maxMessageBytes: number;
  /** The cap on the bytes of the lines held (an oversized line counts its id prefix). */
  readonly maxHeldBytes: number;
}

/** A held line; `id`: of a request still waiting for its answer (not notifications, not the answered initialize). */
type Held =
  | { readonly kind: 'line'; readonly bytes: Uint8Array; readonly id: string | number | undefined }
  | { readonly kind: 'oversized'; readonly prefix: Uint8Array; readonly id: string | number | undefined };

/** Lines up to this size are parsed while held (a cancellation is a few dozen bytes); longer ones only scanned for their id. */
const MAX_PEEK_BYTES = 64 * 1024;
/** What each held line costs beyond its bytes (its object, its id), counted against the cap. */
const HELD_ITEM_OVERHEAD_BYTES = 256;
/** Notes kept for the logger; past this they are counted. */
const MAX_NOTES = 64;
const LOSSY_UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

export class EarlyStdio implements HeldInput {
  answeredInitialize: EarlyInitialize | undefined;

  readonly #options: EarlyStdioOptions;
  readonly #reader: LineReader;
  #state: 'holding' | 'released' | 'failed' | 'stopped' = 'holding';
  #held: Held[] = [];
  #heldBytes = 0;
  #isFirstLine = true;
  #isEnded = false;
  #inputError: Error | undefined;
  #sink: HeldLineSink | undefined;
  #failure: EarlyError | undefined;
  /** The channel, once takeChannel was called. */
  #channel: Promise<ProtocolChannel> | undefined;
  /** The stream once the channel is taken; until then, the lines to write go to #unwritten. */
  #stream: Writable | undefined;
  #unwritten: (string | Uint8Array)[] = [];
  #lastWrite: Promise<void> = Promise.resolve();
  #isWaitingForDrain = false;
  #notes: { level: 'info' | 'warn'; fields: Record<string, unknown>; message: string }[] = [];
  #notesDropped = 0;
  #logger: NoteLogger | undefined;

  constructor(options: EarlyStdioOptions) {
    this.#options = options;
    this.#reader = new LineReader(options.maxMessageBytes, {
      line: (bytes) => this.#onLine(bytes),
      oversized: (prefix) => this.#onOversized(prefix),
    });
    const { input } = options;
    input.on('data', this.#onData);
    input.on('end', this.#onEnd);
    input.on('error', this.#onError);
    input.resume();
  }

  /** Where protocol lines go from now on (serve's output takes it over): fd 1 is no longer the client's. */
  get channel(): Promise<ProtocolChannel> {
    if (this.#channel !== undefined) return this.#channel;
    const channel = (this.#channel = this.#options.takeChannel());
    channel.then(
      ({ output: stream }) => {
        this.#stream = stream;
        for (const line of this.#unwritten) this.#writeNow(stream, line);
        this.#unwritten = [];
      },
      // serve reports a channel that could not be taken; nothing can be written then.
      () => (this.#unwritten = []),
    );
    return channel;
  }

  /** True once the transport took over. */
  get isReleased(): boolean {
    return this.#state === 'released';
  }

  /** From now on the notes go to `logger`; those kept so far first. */
  attachLogger(logger: NoteLogger): void {
    this.#logger = logger;
    for (const note of this.#notes) logger[note.level](note.fields, note.message);
    if (this.#notesDropped > 0) logger.warn({ dropped: this.#notesDropped }, 'early front: more notes than kept');
    this.#notes = [];
  }

  release(sink: HeldLineSink): void {
    if (this.#state !== 'holding') throw new Error(`the early front cannot be released once ${this.#state}`);
    this.#state = 'released';
    this.#sink = sink;
    const held = this.#held;
    this.#held = [];
    this.#heldBytes = 0;
    for (const item of held) {
      if (item.kind === 'line') sink.line(item.bytes);
      else sink.oversized(item.prefix);
    }
    if (this.#inputError) sink.error(this.#inputError);
    if (this.#isEnded) sink.end();
  }

  /**
   * The host did not start: every held request, and every request that arrives from
   * now on, is answered with `error`. Resolves once those answers are written.
   */
  fail(error: EarlyError): Promise<void> {
    if (this.#state === 'holding') {
      this.#state = 'failed';
      this.#failure = error;
      for (const item of this.#held) if (item.id !== undefined) this.#answerError(item.id, error);
      this.#held = [];
      this.#heldBytes = 0;
    }
    return this.#lastWrite;
  }

  stop(): void {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    const { input } = this.#options;
    input.off('data', this.#onData);
    input.off('end', this.#onEnd);
    input.off('error', this.#onError);
    input.pause();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    this.#reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };

  readonly #onEnd = (): void => {
    this.#reader.end();
    this.#isEnded = true;
    if (this.#state === 'released') this.#sink!.end();
  };

  readonly #onError = (error: Error): void => {
    if (this.#state === 'released') this.#sink!.error(error);
    else this.#inputError ??= error;
  };

  #onLine(bytes: Uint8Array): void {
    if (this.#state === 'released') {
      this.#sink!.line(bytes);
      return;
    }
    if (this.#state === 'stopped') return;
    let isAnswered = false;
    if (this.#isFirstLine) {
      this.#isFirstLine = false;
      const answer = answerInitializeEarly(bytes, this.#options.serverInfo, this.#options.maxMessageBytes);
      if (answer !== undefined && this.#state === 'holding') {
        isAnswered = true;
        this.answeredInitialize = answer;
        this.#write(answer.response);
        this.#note('info', { id: answer.id, protocolVersion: answer.response.result.protocolVersion }, 'initialize answered while the host starts');
      }
      // The answer is out: the protocol can move off fd 1 now (serve awaits it before it builds anything).
      void this.channel;
    }
    const facts = peek(bytes);
    if (this.#state === 'failed') {
      if (facts.id !== undefined && facts.isRequest) this.#answerError(facts.id, this.#failure!);
      return;
    }
    if (facts.cancels !== undefined && this.#dropHeldRequest(facts.cancels)) return;
    // A copy (Buffer.from: a Buffer's slice() is a view): the reader's line is a view of its chunk,
    // which must not stay alive for a short line, nor count for less than it holds against the cap.
    // The answered initialize is held without its id: it waits for no answer, and cannot be cancelled.
    this.#hold({ kind: 'line', bytes: Buffer.from(bytes), id: facts.isRequest && !isAnswered ? facts.id : undefined });
  }

  #onOversized(prefix: Uint8Array): void {
    if (this.#state === 'released') {
      this.#sink!.oversized(prefix);
      return;
    }
    if (this.#state === 'stopped') return;
    this.#isFirstLine = false;
    const id = idOf(LOSSY_UTF8.decode(prefix));
    if (this.#state === 'failed') {
      if (id !== undefined) this.#answerError(id, this.#failure!);
      return;
    }
    this.#hold({ kind: 'oversized', prefix: Buffer.from(prefix), id });
  }

  #hold(item: Held): void {
    const bytes = heldSizeOf(item);
    if (this.#heldBytes + bytes > this.#options.maxHeldBytes) {
      const { maxHeldBytes } = this.#options;
      if (item.id === undefined) {
        this.#note('warn', { maxHeldBytes }, 'notification dropped: too many messages held while the host starts');
        return;
      }
      this.#note('warn', { id: item.id, maxHeldBytes }, 'request refused: too many messages held while the host starts');
      this.#answerError(item.id, {
        code: JSONRPC_INTERNAL_ERROR,
        message: 'The host is still starting and holds as many messages as it can; send this request again once it has answered the others.',
        data: errorData('internal', { reason: 'queue_full', maxHeldBytes }),
      });
      return;
    }
    this.#held.push(item);
    this.#heldBytes += bytes;
  }

  /** A cancellation of a request still held: neither runs, nothing is answered (SPEC section 6). */
  #dropHeldRequest(id: string | number): boolean {
    const index = this.#held.findIndex((item) => item.id === id);
    if (index === -1) return false;
    const [dropped] = this.#held.splice(index, 1);
    this.#heldBytes -= heldSizeOf(dropped!);
    this.#note('info', { id }, 'request cancelled while the host starts: not run');
    return true;
  }

  #answerError(id: string | number, error: EarlyError): void {
    this.#write({ jsonrpc: '2.0', id, error });
  }

  #write(message: unknown): void {
    const line = `${JSON.stringify(message)}\n`;
    if (this.#stream) this.#writeNow(this.#stream, line);
    else if (this.#channel === undefined && this.#options.directFd !== undefined) this.#writeDirect(this.#options.directFd, line);
    else this.#unwritten.push(line);
  }

  /** Before the channel is asked for, fd 1 is still the client's, and nothing else writes to it yet. */
  #writeDirect(fd: number, line: string): void {
    const bytes = Buffer.from(line);
    let written = 0;
    try {
      written = writeSync(fd, bytes);
    } catch (error) {
      // A full pipe (EAGAIN): the rest goes out on the channel, first; a client gone (EPIPE): nowhere.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
    }
    if (written < bytes.byteLength) this.#unwritten.push(bytes.subarray(written));
  }

  #writeNow(stream: Writable, line: string | Uint8Array): void {
    const previous = this.#lastWrite;
    let isBelowMark = true;
    const written = new Promise<void>((resolve) => (isBelowMark = stream.write(line, () => resolve())));
    this.#lastWrite = previous.then(() => written);
    if (!isBelowMark && !this.#isWaitingForDrain) this.#waitForDrain(stream);
  }

  /**
   * A client that sends and does not read would grow the answers it is given (queue_full,
   * the failure) without bound: stdin is read no further until they are written.
   */
  #waitForDrain(stream: Writable): void {
    this.#isWaitingForDrain = true;
    this.#options.input.pause();
    stream.once('drain', () => {
      this.#isWaitingForDrain = false;
      if (this.#state !== 'stopped') this.#options.input.resume();
    });
  }

  #note(level: 'info' | 'warn', fields: Record<string, unknown>, message: string): void {
    if (this.#logger) this.#logger[level](fields, message);
    else if (this.#notes.length < MAX_NOTES) this.#notes.push({ level, fields, message });
    else this.#notesDropped++;
  }
}

/** What a held line counts against the cap: its bytes and its bookkeeping (a flood of empty notifications is bounded too). */
function heldSizeOf(item: Held): number {
  return HELD_ITEM_OVERHEAD_BYTES + (item.kind === 'line' ? item.bytes.byteLength : item.prefix.byteLength);
}

/** What the early front needs of a held line: its id, whether it is a request, which request it cancels. */
function peek(bytes: Uint8Array): { id: string | number | undefined; isRequest: boolean; cancels?: string | number } {
  if (bytes.byteLength > MAX_PEEK_BYTES) {
    // Too long to parse twice; a line this long is no cancellation, and a message with an id is a request here.
    const id = idOf(LOSSY_UTF8.decode(bytes.subarray(0, MAX_PEEK_BYTES)));
    return { id, isRequest: id !== undefined };
  }
  const text = LOSSY_UTF8.decode(bytes);
  const scan = scanJson(text, MAX_MESSAGE_DEPTH);
  if (!scan.ok || scan.topLevel !== 'object' || scan.maxDepth > MAX_MESSAGE_DEPTH) return { id: idOf(text), isRequest: true };
  const message: unknown = JSON.parse(text);
  if (!isRecord(message)) return { id: undefined, isRequest: false };
  const id = validId(message['id']);
  const isRequest = typeof message['method'] === 'string' && id !== undefined;
  const params = message['params'];
  const cancels = message['method'] === 'notifications/cancelled' && id === undefined && isRecord(params) ? validId(params['requestId']) : undefined;
  return cancels !== undefined ? { id, isRequest, cancels } : { id, isRequest };
}

/** The top-level id of a line that may not parse (or its first bytes). */
function idOf(text: string): string | number | undefined {
  return recoverIdFromPrefix(text) ?? undefined;
}

function validId(value: unknown): string | number | undefined {
  return isRequestId(value) ? value : undefined;
}
