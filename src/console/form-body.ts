// A form POST's body: application/x-www-form-urlencoded only, read with a
// byte cap counted as the bytes arrive.
import type { IncomingMessage } from 'node:http';
import { header } from './security.js';

/** Largest form body accepted, in bytes (a note and a few fields). */
const MAX_FORM_BYTES = 16 * 1024;

type FormRead = { readonly ok: true; readonly fields: URLSearchParams } | { readonly ok: false; readonly status: 413 | 415 };

/** Reads the form; a body past the cap or of another type is refused (the socket is drained or dropped). */
export async function readForm(req: IncomingMessage): Promise<FormRead> {
  const type = (header(req, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    return { ok: false, status: 415 };
  }
  const declared = Number(header(req, 'content-length'));
  if (Number.isFinite(declared) && declared > MAX_FORM_BYTES) {
    req.resume();
    return { ok: false, status: 413 };
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.byteLength;
    if (bytes > MAX_FORM_BYTES) {
      req.destroy();
      return { ok: false, status: 413 };
    }
    chunks.push(chunk);
  }
  return { ok: true, fields: new URLSearchParams(Buffer.concat(chunks).toString('utf8')) };
}
