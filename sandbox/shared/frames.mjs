// Length-prefixed frames for the pipe between the host and an isolate process.
// A frame is `u32 frameBytes | u32 headerBytes | header (UTF-8 JSON) | body`,
// big-endian. The body carries bulk text (a result's JSON, a fetch body) as raw
// UTF-8, so it is never escaped again inside the header. The reader learns a
// frame's size from its first four bytes and refuses one over its limit before
// buffering a byte of it: the far side can never make this side hold more than
// the limit, nor parse more than a header's limit as JSON.
// Plain ESM, node: imports only: the host and the isolate process both load it.

/** Bytes of the two length fields in front of every frame. */
export const FRAME_PREFIX_BYTES = 8;

/**
 * Encodes one frame.
 * @param {object} header  plain JSON data
 * @param {string | Uint8Array} [body]
 * @returns {Buffer}
 */
export function encodeFrame(header, body) {
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const bodyBytes = body === undefined ? EMPTY : typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const prefix = Buffer.allocUnsafe(FRAME_PREFIX_BYTES);
  prefix.writeUInt32BE(4 + headerBytes.length + bodyBytes.length, 0);
  prefix.writeUInt32BE(headerBytes.length, 4);
  return Buffer.concat([prefix, headerBytes, bodyBytes]);
}

/**
 * Splits a byte stream into frames, holding at most one frame of `maxFrameBytes`.
 * `onFrame(header, body)` gets the parsed header (unknown: check it) and the body
 * bytes; `onError(reason)` is called once, after which nothing more is read:
 * `frame_too_large`, `header_too_large`, `bad_header`.
 */
export class FrameReader {
  /**
   * @param {{ maxFrameBytes: number, maxHeaderBytes: number,
   *           onFrame: (header: unknown, body: Buffer) => void, onError: (reason: string) => void }} options
   */
  constructor(options) {
    this.options = options;
    /** @type {Buffer[]} */
    this.chunks = [];
    this.buffered = 0;
    /** Bytes of the frame being read (after the first u32), or -1 while its length is unknown. */
    this.expected = -1;
    this.failed = false;
  }

  /** @param {Buffer} chunk */
  push(chunk) {
    if (this.failed) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < 4) return;
        const length = this.take(4).readUInt32BE(0);
        if (length < 4 || length > this.options.maxFrameBytes) return this.fail('frame_too_large');
        this.expected = length;
      }
      if (this.buffered < this.expected) return;
      const frame = this.take(this.expected);
      this.expected = -1;
      const headerBytes = frame.readUInt32BE(0);
      if (headerBytes > this.options.maxHeaderBytes || headerBytes > frame.length - 4) return this.fail('header_too_large');
      let header;
      try {
        header = JSON.parse(frame.toString('utf8', 4, 4 + headerBytes));
      } catch {
        return this.fail('bad_header');
      }
      this.options.onFrame(header, frame.subarray(4 + headerBytes));
      if (this.failed) return;
    }
  }

  /** @param {string} reason */
  fail(reason) {
    this.failed = true;
    this.chunks = [];
    this.buffered = 0;
    this.options.onError(reason);
  }

  /** Removes and returns the first `bytes` buffered bytes (callers checked they are there). */
  take(bytes) {
    const first = this.chunks[0];
    if (first !== undefined && first.length >= bytes) {
      const out = first.subarray(0, bytes);
      if (first.length === bytes) this.chunks.shift();
      else this.chunks[0] = first.subarray(bytes);
      this.buffered -= bytes;
      return out;
    }
    const out = Buffer.allocUnsafe(bytes);
    let filled = 0;
    while (filled < bytes) {
      const chunk = /** @type {Buffer} */ (this.chunks[0]);
      const part = Math.min(chunk.length, bytes - filled);
      chunk.copy(out, filled, 0, part);
      filled += part;
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
    }
    this.buffered -= bytes;
    return out;
  }
}

const EMPTY = Buffer.alloc(0);
