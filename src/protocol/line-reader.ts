// Splits an inbound byte stream into newline-delimited lines with a byte cap
// enforced while the bytes arrive: a line that grows past the cap is reported
// at once (with its first bytes, to recover the id) and the rest of it is
// dropped up to the next newline, never buffered.
import { ID_SCAN_BYTES } from './message-limits.js';

export interface LineSink {
  /** A complete line, without `\n` (and without a trailing `\r`). */
  line(bytes: Uint8Array): void;
  /** A line passed `maxLineBytes`; `prefix` holds its first bytes. */
  oversized(prefix: Uint8Array): void;
}

/** Feeds chunks in, calls the sink once per line. */
export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  /** True while dropping the tail of an oversized line. */
  private discarding = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly sink: LineSink,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline !== -1 && this.size === 0 && !this.discarding) {
        // The common case: a whole line inside this chunk, nothing held from before. It is
        // handed on as a view of the chunk (no parts list, no copy).
        this.wholeLine(chunk, start, newline);
        start = newline + 1;
        continue;
      }
      const end = newline === -1 ? chunk.length : newline;
      if (!this.discarding) this.append(chunk.subarray(start, end));
      if (newline === -1) return;
      this.finishLine();
      start = newline + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    if (this.size > 0 && !this.discarding) this.finishLine();
    this.reset();
  }

  private append(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.size + piece.length > this.maxLineBytes) {
      this.parts.push(piece);
      const prefix = Buffer.concat(this.parts, Math.min(this.size + piece.length, ID_SCAN_BYTES));
      this.parts = [];
      this.size = 0;
      this.discarding = true;
      this.sink.oversized(prefix);
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  /** `chunk[start, newline)` is a whole line: the same checks as append() then finishLine(). */
  private wholeLine(chunk: Buffer, start: number, newline: number): void {
    const length = newline - start;
    if (length > this.maxLineBytes) {
      this.sink.oversized(chunk.subarray(start, start + Math.min(length, ID_SCAN_BYTES)));
      return;
    }
    this.deliver(chunk, start, newline);
  }

  private finishLine(): void {
    if (this.discarding) {
      this.reset();
      return;
    }
    const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.reset();
    this.deliver(line, 0, line.length);
  }

  /** Hands on `bytes[start, end)` without a trailing `\r`, unless it is blank. */
  private deliver(bytes: Buffer, start: number, end: number): void {
    if (end > start && bytes[end - 1] === 0x0d) end--;
    for (let i = start; i < end; i++) {
      const byte = bytes[i];
      if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) {
        this.sink.line(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
        return;
      }
    }
  }

  private reset(): void {
    // A new list only when the old one was used: most lines never touch it.
    if (this.parts.length !== 0) this.parts = [];
    this.size = 0;
    this.discarding = false;
  }
}
