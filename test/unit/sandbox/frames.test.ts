// Frames between the host and an isolate process: any chunking reads back the
// same frames, and a frame past the limit is refused from its length alone,
// before a byte of it is buffered.
import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameReader } from '../../../sandbox/shared/frames.mjs';

function reader(maxFrameBytes = 1024, maxHeaderBytes = 256) {
  const frames: Array<{ header: unknown; body: string }> = [];
  const errors: string[] = [];
  const frameReader = new FrameReader({
    maxFrameBytes,
    maxHeaderBytes,
    onFrame: (header: unknown, body: Buffer) => frames.push({ header, body: body.toString('utf8') }),
    onError: (reason: string) => errors.push(reason),
  });
  return { frameReader, frames, errors };
}

describe('frames', () => {
  it('reads frames back whatever the chunking, bodies as raw bytes', () => {
    const bytes = Buffer.concat([encodeFrame({ type: 'a', n: 1 }), encodeFrame({ type: 'b' }, '{"json":"body ✓"}'), encodeFrame({ type: 'c' }, new Uint8Array([104, 105]))]);
    for (const size of [1, 3, 7, bytes.length]) {
      const { frameReader, frames, errors } = reader();
      for (let at = 0; at < bytes.length; at += size) frameReader.push(bytes.subarray(at, at + size));
      expect(errors).toEqual([]);
      expect(frames).toEqual([
        { header: { type: 'a', n: 1 }, body: '' },
        { header: { type: 'b' }, body: '{"json":"body ✓"}' },
        { header: { type: 'c' }, body: 'hi' },
      ]);
    }
  });

  it('refuses a frame past the limit from its length prefix, buffering nothing of it', () => {
    const { frameReader, frames, errors } = reader(1024);
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(64 * 1024 * 1024, 0);
    frameReader.push(prefix);
    expect(errors).toEqual(['frame_too_large']);
    expect(frameReader.buffered).toBe(0);
    // Nothing more is read after a refusal.
    frameReader.push(encodeFrame({ type: 'late' }));
    expect(frames).toEqual([]);
    expect(errors).toEqual(['frame_too_large']);
  });

  it('refuses a header past its own limit and a header that is not JSON', () => {
    const big = reader(4096, 16);
    big.frameReader.push(encodeFrame({ type: 'x'.repeat(100) }));
    expect(big.errors).toEqual(['header_too_large']);
    const bad = reader();
    const frame = Buffer.from(encodeFrame({ type: 'a' }));
    frame[8] = 0x7b; // '{' then garbage: the header no longer parses
    frame[9] = 0x7b;
    bad.frameReader.push(frame);
    expect(bad.errors).toEqual(['bad_header']);
  });
});
