// What the egress proxy (egress-proxy.ts) reads from a request that Node's
// own HTTP parser (llhttp, strict) has already parsed: the target of a
// `CONNECT host:port` (a tunnel) or of `METHOD http://host[:port]/path` (one
// plain-HTTP request), the call a request belongs to (`Proxy-Authorization:
// Toolhost <token>`, never forwarded), and the headers to send on: rebuilt
// from the parsed fields, never the bytes received, without the hop-by-hop
// ones and with Host set from the target (RFC 9112 section 3.2.2).

/** The header value a call's requests carry: `Proxy-Authorization: Toolhost <token>`. */
export const CALL_TOKEN_SCHEME = 'Toolhost';
/** The header of the proxy's own refusals naming the call's token, which no origin server can know. */
export const CALL_TOKEN_ECHO_HEADER = 'X-Toolhost-Call';

/** Whether `token` has the shape of a call token (128 random bits, hex). */
export function isCallToken(token: unknown): token is string {
  return typeof token === 'string' && /^[0-9a-f]{32}$/.test(token);
}

type ProxyTarget = { readonly ok: true; readonly host: string; readonly port: number } | { readonly ok: false; readonly reason: string };

/** The `host:port` of a CONNECT (IPv6 in brackets, or bare as Python 3.11's http.client sends it). */
export function parseConnectTarget(target: string): ProxyTarget {
  const authority = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(target);
  // Some clients send an IPv6 tunnel target without brackets: the port is the last part.
  const bare = authority === null ? /^([0-9a-fA-F:.]*:[0-9a-fA-F:.]*):(\d{1,5})$/.exec(target) : null;
  if (authority === null && bare === null) return { ok: false, reason: 'malformed_request' };
  return { ok: true, host: authority?.[1] ?? `[${bare?.[1] ?? ''}]`, port: Number(authority?.[2] ?? bare?.[2]) };
}

/** The origin of an absolute-form plain-HTTP request (`http://host[:port]/path`), and its origin-form path. */
export function parseHttpTarget(
  target: string,
): (ProxyTarget & { readonly ok: false }) | { readonly ok: true; readonly host: string; readonly port: number; readonly path: string; readonly authority: string } {
  // No userinfo, no other scheme (HTTPS goes by CONNECT), nothing a resolver might read otherwise.
  const url = /^http:\/\/(\[[0-9a-fA-F:.]+\]|[^/:?#[\]@\s]+)(?::(\d{1,5}))?(\/[^\s#]*)?$/i.exec(target);
  if (url === null) return { ok: false, reason: 'not_a_proxy_request' };
  const host = url[1] ?? '';
  const port = url[2] === undefined ? 80 : Number(url[2]);
  return { ok: true, host, port, path: url[3] ?? '/', authority: url[2] === undefined ? host : `${host}:${port}` };
}

/** `Proxy-Authorization: Toolhost <token>`, from a parsed request's raw header list. */
export function callTokenOf(rawHeaders: readonly string[]): string | undefined {
  for (let at = 0; at + 1 < rawHeaders.length; at += 2) {
    if (rawHeaders[at]?.toLowerCase() !== 'proxy-authorization') continue;
    const match = /^(\S+)\s+(\S+)$/.exec((rawHeaders[at + 1] ?? '').trim());
    if (match !== null && match[1] === CALL_TOKEN_SCHEME && isCallToken(match[2])) return match[2];
  }
  return undefined;
}

// Headers of the hop, never forwarded either way (RFC 9110 section 7.6.1), and the
// message framing, which Node writes afresh for what it actually sends.
const HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The headers to send on, as a raw list (name, value, …): every parsed field but the hop's
 * (and those the Connection field names), Host set to `authority` for a request. Content-Length
 * stays only where the body goes on as it came (Node frames anything else itself).
 */
export function forwardedHeaders(rawHeaders: readonly string[], authority?: string): string[] {
  const named = new Set<string>();
  for (let at = 0; at + 1 < rawHeaders.length; at += 2) {
    if (rawHeaders[at]?.toLowerCase() !== 'connection') continue;
    for (const token of (rawHeaders[at + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
  }
  const out: string[] = authority === undefined ? [] : ['Host', authority];
  for (let at = 0; at + 1 < rawHeaders.length; at += 2) {
    const name = rawHeaders[at] ?? '';
    const lower = name.toLowerCase();
    if (HOP_HEADERS.has(lower) || named.has(lower) || (authority !== undefined && lower === 'host')) continue;
    out.push(name, rawHeaders[at + 1] ?? '');
  }
  return out;
}

/** Bytes a raw header list takes on the wire (`name: value\r\n` each), for the call's byte budget. */
export function headerBytes(rawHeaders: readonly string[]): number {
  let bytes = 0;
  for (const field of rawHeaders) bytes += Buffer.byteLength(field, 'latin1') + 2;
  return bytes;
}
