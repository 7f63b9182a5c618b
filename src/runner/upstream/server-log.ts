// What an upstream server says besides MCP, into the host's log (SPEC section
// 2.1: "upstream log messages go to the host's log"): its stderr, line by line,
// and its notifications/message. Both are the server's words, so they are
// bounded before anything else is done with them (a line is cut at
// MAX_SERVER_LOG_LINE_BYTES as it arrives, then at MAX_SERVER_LOG_LINE_CHARS),
// redacted (secret values of the host's environment), and rate-limited: a
// server that floods gets SERVER_LOG_BURST lines, then SERVER_LOG_LINES_PER_SECOND;
// the host logs that it drops lines at once, and how many with the next line.
import type { Logger } from '../../log.js';

/** Bytes of one stderr line kept while it arrives; the rest of that line is skipped. */
export const MAX_SERVER_LOG_LINE_BYTES = 4096;
/** Characters of one line (stderr or log message) written to the host's log, after redaction. */
export const MAX_SERVER_LOG_LINE_CHARS = 1024;
/** Lines a server may log at once (the bucket), and the rate it refills at. */
export const SERVER_LOG_BURST = 100;
export const SERVER_LOG_LINES_PER_SECOND = 10;

interface ServerLogOptions {
  readonly logger: Logger;
  /** The server profile, as the host's log names it (`fs:read_only`). */
  readonly server: string;
  /**
   * Redacts a text and cuts it to `maxChars` (the host's Redactor.cut: secret values, a
   * secret's piece at a cut edge, host paths); default: cut only.
   */
  readonly redact?: (text: string, maxChars: number) => string;
  /** Milliseconds clock of the rate limit (tests); default performance.now. */
  readonly now?: () => number;
}

// RFC 5424 levels as MCP sends them, onto pino's.
const LEVELS: Readonly<Record<string, 'debug' | 'info' | 'warn' | 'error'>> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  alert: 'error',
  emergency: 'error',
};

/** One server process's stderr and log messages, on their way to the host's log. */
export class ServerLog {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #isSkipping = false;
  #tokens = SERVER_LOG_BURST;
  #refilledAtMs: number;
  #dropped = 0;
  readonly #now: () => number;
  readonly #decoder = new TextDecoder('utf-8');

  constructor(private readonly options: ServerLogOptions) {
    this.#now = options.now ?? (() => performance.now());
    this.#refilledAtMs = this.#now();
  }

  /** A chunk of the server's stderr: each complete line is logged (at info). */
  stderr(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10, start); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.#keep(chunk.subarray(start, newline));
      this.#endLine();
      start = newline + 1;
    }
    this.#keep(chunk.subarray(start));
  }

  /** A notifications/message from the server: its level and data. */
  message(params: unknown): void {
    if (!this.#admit()) return;
    const record = typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {};
    const level = LEVELS[String(record['level'])] ?? 'info';
    const data = record['data'];
    const text = typeof data === 'string' ? data : (JSON.stringify(data ?? null) ?? 'null');
    const facts = {
      server: this.options.server,
      upstreamLevel: String(record['level']).slice(0, 16),
      ...(typeof record['logger'] === 'string' ? { upstreamLogger: this.#bound(record['logger'].slice(0, 64)) } : {}),
    };
    this.options.logger[level]({ ...facts, data: this.#bound(text) }, 'upstream server log');
  }

  /** The server is gone: its last stderr line without a newline, and the count of dropped lines. */
  end(): void {
    if (this.#pendingBytes > 0 && !this.#isSkipping) this.#writeLine(false);
    this.#reportDropped();
  }

  // A line that reaches the byte bound is logged at once (cut), and the rest of it is skipped.
  #keep(bytes: Buffer): void {
    if (this.#isSkipping || bytes.byteLength === 0) return;
    const room = MAX_SERVER_LOG_LINE_BYTES - this.#pendingBytes;
    this.#pending.push(bytes.byteLength > room ? bytes.subarray(0, room) : bytes);
    this.#pendingBytes += Math.min(room, bytes.byteLength);
    if (bytes.byteLength >= room) {
      this.#writeLine(true);
      this.#isSkipping = true;
    }
  }

  #endLine(): void {
    if (!this.#isSkipping) this.#writeLine(false);
    this.#isSkipping = false;
  }

  #writeLine(isCut: boolean): void {
    const bytes = Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    const line = this.#decoder.decode(bytes).replace(/\r$/, '');
    if (line.trim() === '' || !this.#admit()) return;
    this.options.logger.info({ server: this.options.server, stderr: this.#bound(line), ...(isCut ? { cut: true } : {}) }, 'upstream server stderr');
  }

  // Redaction first (a secret cut in half would no longer match), then the bound.
  #bound(text: string): string {
    if (this.options.redact) return this.options.redact(text, MAX_SERVER_LOG_LINE_CHARS);
    return text.length > MAX_SERVER_LOG_LINE_CHARS ? text.slice(0, MAX_SERVER_LOG_LINE_CHARS) : text;
  }

  // A token bucket: SERVER_LOG_BURST lines, refilled at SERVER_LOG_LINES_PER_SECOND.
  #admit(): boolean {
    const nowMs = this.#now();
    this.#tokens = Math.min(SERVER_LOG_BURST, this.#tokens + ((nowMs - this.#refilledAtMs) / 1000) * SERVER_LOG_LINES_PER_SECOND);
    this.#refilledAtMs = nowMs;
    if (this.#tokens < 1) {
      // Said at once, so a flood is visible while it lasts; the count follows with the next line.
      if (this.#dropped++ === 0) this.options.logger.warn({ server: this.options.server }, 'upstream server logs too much: dropping lines');
      return false;
    }
    this.#tokens -= 1;
    this.#reportDropped();
    return true;
  }

  #reportDropped(): void {
    if (this.#dropped === 0) return;
    this.options.logger.warn({ server: this.options.server, dropped: this.#dropped }, 'upstream server logged too much: lines dropped');
    this.#dropped = 0;
  }
}
