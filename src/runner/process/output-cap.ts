// Byte accounting for process output: count as chunks arrive and stop at the
// cap, instead of buffering everything and measuring afterwards.

/**
 * Bytes of stderr kept for a failure's details (the tail, where errors usually are):
 * more than the caller sees, since the supervisor redacts the tail before it cuts it.
 */
export const STDERR_TAIL_BYTES = 8192;

/** Counts bytes against a cap; `isExceeded` turns true once the total passes it. */
export class ByteBudget {
  private usedBytes = 0;

  constructor(readonly maxBytes: number) {}

  /** Starts counting again from zero (the same cap); returns this budget. */
  reset(): this {
    this.usedBytes = 0;
    return this;
  }

  /** Adds `bytes`; returns false when the budget is now exceeded. */
  spend(bytes: number): boolean {
    this.usedBytes += bytes;
    return this.usedBytes <= this.maxBytes;
  }

  get totalBytes(): number {
    return this.usedBytes;
  }

  get isExceeded(): boolean {
    return this.usedBytes > this.maxBytes;
  }
}

/** Collects chunks up to a byte cap; the caller checks the cap before pushing. */
export class ChunkCollector {
  private readonly chunks: Buffer[] = [];
  private lengthBytes = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.lengthBytes += chunk.length;
  }

  get byteLength(): number {
    return this.lengthBytes;
  }

  concat(): Buffer {
    return Buffer.concat(this.chunks, this.lengthBytes);
  }
}

/** Keeps only the last `maxBytes` bytes written to it. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private lengthBytes = 0;

  constructor(private readonly maxBytes: number = STDERR_TAIL_BYTES) {}

  push(chunk: Buffer): void {
    const kept = chunk.length > this.maxBytes ? chunk.subarray(chunk.length - this.maxBytes) : chunk;
    this.chunks.push(kept);
    this.lengthBytes += kept.length;
    while (this.lengthBytes - (this.chunks[0]?.length ?? 0) >= this.maxBytes) {
      const dropped = this.chunks.shift();
      this.lengthBytes -= dropped?.length ?? 0;
    }
  }

  clear(): void {
    // Called after every persistent call: most tools write no stderr, so keep the empty array.
    if (this.lengthBytes === 0) return;
    this.chunks = [];
    this.lengthBytes = 0;
  }

  /** The tail as text: cut to `maxBytes`, a broken leading character dropped, invalid bytes replaced. */
  toText(): string {
    let tail = Buffer.concat(this.chunks, this.lengthBytes);
    if (tail.length > this.maxBytes) tail = tail.subarray(tail.length - this.maxBytes);
    // Skip UTF-8 continuation bytes at the cut so the tail starts on a character.
    let start = 0;
    while (start < tail.length && start < 3 && ((tail[start] ?? 0) & 0xc0) === 0x80) start++;
    return tail.subarray(start).toString('utf8');
  }
}

/** Decodes bytes as strict UTF-8; undefined when they are not valid UTF-8. */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

// ignoreBOM: a leading BOM stays in the text, so the supervisor sees exactly what the tool wrote.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
