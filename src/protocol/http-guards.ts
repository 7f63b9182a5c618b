// The checks a request meets before anything of MCP runs (SPEC section 6.1):
// Host and Origin against the allowed names (DNS rebinding: 403), and a body
// read with a byte cap (413) then checked like a stdio line (boundary.ts:
// UTF-8, duplicate keys, depth, JSON-RPC shape, what the SDK would dispatch).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import { checkLine, type MalformedResponse } from './boundary.js';
import { errorData } from '../errors.js';
import { JSONRPC_INVALID_REQUEST } from './jsonrpc-codes.js';

/** Loopback names always accepted on a loopback bind. */
export const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

/** True for an address only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

/** Host and Origin checks; false when a 403 was already written. */
export function checkHostAndOrigin(req: IncomingMessage, res: ServerResponse, allowedHostnames: readonly string[]): boolean {
  const host = validateHostHeader(req.headers.host, [...allowedHostnames]);
  if (!host.ok) {
    writeJsonRpcError(res, 403, -32000, 'Forbidden: the Host header is not a name this server answers to.', { code: 'forbidden_host', reason: host.errorCode });
    return false;
  }
  const origin = validateOriginHeader(req.headers.origin, [...allowedHostnames]);
  if (!origin.ok) {
    writeJsonRpcError(res, 403, -32000, 'Forbidden: requests from this Origin are not allowed.', { code: 'forbidden_origin', reason: origin.errorCode });
    return false;
  }
  return true;
}

type BodyRead = { readonly ok: true; readonly message: unknown } | { readonly ok: false };

/**
 * Reads a POST body of at most `maxBytes` and checks it as one JSON-RPC message.
 * On failure the answer (413, or 400 with the malformed_request error) is written here.
 */
export async function readMessageBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    refuseTooLarge(res, maxBytes);
    req.resume();
    return { ok: false };
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) {
      // Counted as the bytes arrive: a body without Content-Length cannot grow past the cap either.
      refuseTooLarge(res, maxBytes);
      req.destroy();
      return { ok: false };
    }
    chunks.push(chunk);
  }
  const check = checkLine(Buffer.concat(chunks), maxBytes);
  if (!check.ok) {
    writeJson(res, 400, check.response);
    return { ok: false };
  }
  return { ok: true, message: check.message };
}

function refuseTooLarge(res: ServerResponse, maxBytes: number): void {
  const response: MalformedResponse = {
    jsonrpc: '2.0',
    id: null,
    error: { code: JSONRPC_INVALID_REQUEST, message: 'Invalid Request', data: errorData('malformed_request', { reason: 'too_large', maxBytes }) },
  };
  writeJson(res, 413, response, { connection: 'close' });
}

/** A JSON-RPC error with no id, as the HTTP answer. */
export function writeJsonRpcError(res: ServerResponse, status: number, code: number, message: string, data: Record<string, unknown>, headers: Record<string, string> = {}): void {
  writeJson(res, status, { jsonrpc: '2.0', id: null, error: { code, message, data } }, headers);
}

/** A JSON body with its status. */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}
