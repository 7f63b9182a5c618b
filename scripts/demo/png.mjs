// A real PNG encoder (8-bit RGB, no interlace), small enough to read: the demo
// and the tests draw their images with it instead of carrying opaque bytes.
// Signature, IHDR, one zlib-compressed IDAT of filtered rows, IEND; each chunk
// with its CRC-32 (PNG specification, sections 5 and 11).
import { crc32, deflateSync } from 'node:zlib';

/**
 * Encodes a width x height image; `pixel(x, y)` returns [r, g, b] (0..255).
 * @param {number} width
 * @param {number} height
 * @param {(x: number, y: number) => [number, number, number]} pixel
 * @returns {Buffer}
 */
export function encodePng(width, height, pixel) {
  const rowBytes = 1 + width * 3;
  const raw = Buffer.alloc(rowBytes * height);
  for (let y = 0; y < height; y++) {
    raw[y * rowBytes] = 0; // filter type: none
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y);
      raw.set([r & 0xff, g & 0xff, b & 0xff], y * rowBytes + 1 + x * 3);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** A diagonal colour gradient: a picture with something to see. */
export function gradientPng(width, height) {
  return encodePng(width, height, (x, y) => [Math.round((255 * x) / Math.max(1, width - 1)), Math.round((255 * y) / Math.max(1, height - 1)), 160]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed) >>> 0, 0);
  return Buffer.concat([length, typed, crc]);
}
