// The request head a client sends the egress proxy (egress-proxy.ts), read
// into what the proxy decides on: `CONNECT host:port` (a tunnel) or
// `METHOD http://host[:port]/path` (one plain-HTTP request, rewritten to origin
// form without the hop headers and with `Connection: close`), and the call a
// request belongs to (`Proxy-Authorization: Toolhost <token>`, never forwarded).

/** The header value a call's requests carry: `Proxy-Authorization: Toolhost <token>`. */
export const CALL_TOKEN_SCHEME = 'Toolhost';
/** The header of the proxy's own refusals naming the call's token, which no origin server can know. */
export const CALL_TOKEN_ECHO_HEADER = 'X-Toolhost-Call';

/** Whether `token` has the shape of a call token (128 random bits, hex). */
export function isCallToken(token: unknown): token is string {
  return typeof token === 'string' && /^[0-9a-f]{32}$/.test(token);
}

export type RequestHead =
  | { readonly ok: true; readonly kind: 'connect'; readonly host: string; readonly port: number; readonly callToken?: string }
  | { readonly ok: true; readonly kind: 'http'; readonly method: string; readonly host: string; readonly port: number; readonly hasBody: boolean; readonly forwardHead: Buffer; readonly callToken?: string }
  | { readonly ok: false; readonly reason: string };

// Headers that describe the hop to the proxy, never forwarded.
const HOP_HEADERS: ReadonlySet<string> = new Set(['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer']);

/** Parses a proxy request head (without its final CRLFCRLF). */
export function parseRequestHead(head: string): RequestHead {
  const lines = head.split('\r\n');
  const requestLine = /^([A-Z]{1,16}) (\S{1,4096}) HTTP\/1\.[01]$/.exec(lines[0] ?? '');
  if (requestLine === null) return { ok: false, reason: 'malformed_request' };
  const method = requestLine[1] ?? '';
  const target = requestLine[2] ?? '';
  if (method === 'CONNECT') {
    const authority = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(target);
    // Some clients (Python 3.11's http.client) send an IPv6 tunnel target without brackets: the port is the last part.
    const bare = authority === null ? /^([0-9a-fA-F:.]*:[0-9a-fA-F:.]*):(\d{1,5})$/.exec(target) : null;
    if (authority === null && bare === null) return { ok: false, reason: 'malformed_request' };
    const host = authority?.[1] ?? `[${bare?.[1] ?? ''}]`;
    const callToken = callTokenOf(lines.slice(1));
    return { ok: true, kind: 'connect', host, port: Number(authority?.[2] ?? bare?.[2]), ...(callToken === undefined ? {} : { callToken }) };
  }
  const url = /^http:\/\/(\[[0-9a-fA-F:.]+\]|[^/:?#[\]@]+)(?::(\d{1,5}))?(\/[^\s]*)?$/i.exec(target);
  if (url === null) return { ok: false, reason: 'not_a_proxy_request' };
  const host = url[1] ?? '';
  const port = url[2] === undefined ? 80 : Number(url[2]);
  const path = url[3] ?? '/';
  const headers: string[] = [];
  let hasBody = false;
  let hasHost = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return { ok: false, reason: 'malformed_request' };
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (HOP_HEADERS.has(name)) continue;
    if (name === 'transfer-encoding' || (name === 'content-length' && value !== '0')) hasBody = true;
    if (name === 'host') hasHost = true;
    headers.push(line);
  }
  if (!hasHost) headers.unshift(`Host: ${url[2] === undefined ? host : `${host}:${port}`}`);
  // One request per connection: the server closes after its answer, so nothing else rides along.
  const forward = [`${method} ${path} HTTP/1.1`, ...headers, 'Connection: close', '', ''].join('\r\n');
  const callToken = callTokenOf(lines.slice(1));
  return { ok: true, kind: 'http', method, host, port, hasBody, forwardHead: Buffer.from(forward, 'latin1'), ...(callToken === undefined ? {} : { callToken }) };
}

// `Proxy-Authorization: Toolhost <token>`: the call a request belongs to (never forwarded).
function callTokenOf(headerLines: readonly string[]): string | undefined {
  for (const line of headerLines) {
    const match = /^proxy-authorization:\s*(\S+)\s+(\S+)\s*$/i.exec(line);
    if (match !== null && match[1] === CALL_TOKEN_SCHEME && isCallToken(match[2])) return match[2];
  }
  return undefined;
}
