// One admitted plain-HTTP request through the egress proxy, re-serialised:
// Node's HTTP client writes a new request from the fields the strict parser
// read (method, origin-form path, forwarded headers, the body as decoded
// chunks), on a connection of its own to the address the admission resolved,
// and the origin's answer comes back the same way, parsed and written anew.
// No byte the tool sent reaches the origin as it was sent: a smuggled line in
// a header or a chunk has nowhere to hide. Every byte counts against the
// call's budget; past it, both sides are cut.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { forwardedHeaders, headerBytes } from './egress-request-head.js';

/** Where the admitted request goes and what it may cost. */
interface HttpForward {
  /** The address the admission resolved (never the name again). */
  readonly address: string;
  readonly family: number;
  readonly port: number;
  /** Origin-form path and the authority for Host. */
  readonly path: string;
  readonly authority: string;
  /** A read_only tool's request: no body is ever sent. */
  readonly withoutBody: boolean;
  readonly connectTimeoutMs: number;
  /** Largest response head the origin may send. */
  readonly maxHeadBytes: number;
  /** Counts bytes against the call's budget: false once it is spent (the caller cuts the call's sockets then). */
  readonly spend: (bytes: number, direction: 'in' | 'out') => boolean;
  /** The upstream socket, once there is one (cut with its call). */
  readonly onSocket: (socket: Socket) => void;
  /** The request could not be sent (connect failed, timed out): answer it with the proxy's refusal. */
  readonly onUnreachable: () => void;
  /** Node's HTTP client will not write what was parsed (its checks are stricter in places): refuse it. */
  readonly onUnwritable: () => void;
}

/** Sends `request` on as a new request and its answer back on `response`. */
export function forwardHttpRequest(request: IncomingMessage, response: ServerResponse, forward: HttpForward): void {
  const headers = forwardedHeaders(request.rawHeaders, forward.authority);
  // Framing is Node's: a body of known length keeps it, anything else goes chunked (or none at all).
  let outgoing: ReturnType<typeof httpRequest>;
  try {
    outgoing = httpRequest({
      host: forward.address,
      family: forward.family,
      port: forward.port,
      method: request.method,
      path: forward.path,
      headers: withoutFraming(headers, forward.withoutBody),
      setHost: false,
      agent: false,
      insecureHTTPParser: false,
      maxHeaderSize: forward.maxHeadBytes,
    });
  } catch {
    return forward.onUnwritable();
  }
  let isAnswered = false;
  const cut = (): void => {
    outgoing.destroy();
    request.socket.destroy();
  };
  outgoing.on('socket', (socket: Socket) => {
    forward.onSocket(socket);
    socket.setTimeout(forward.connectTimeoutMs, () => outgoing.destroy(new Error('connect timeout')));
    socket.once('connect', () => socket.setTimeout(0));
  });
  outgoing.on('error', () => {
    if (!isAnswered && !response.headersSent) forward.onUnreachable();
    else request.socket.destroy();
  });
  if (!forward.spend((request.method?.length ?? 0) + forward.path.length + 12 + headerBytes(headers), 'out')) return cut();
  if (forward.withoutBody) {
    outgoing.end();
    // Whatever the tool sent as a body is read and dropped, so the connection's next request can follow.
    request.resume();
  } else {
    pipeCounted(request, outgoing, (bytes) => forward.spend(bytes, 'out'), cut);
  }
  outgoing.on('response', (answer: IncomingMessage) => {
    isAnswered = true;
    const answerHeaders = forwardedHeaders(answer.rawHeaders);
    if (!forward.spend(12 + (answer.statusMessage?.length ?? 0) + headerBytes(answerHeaders), 'in')) return cut();
    try {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutFraming(answerHeaders, false));
    } catch {
      // A field Node will not write (its checks are stricter than the parser's in places): cut, never thrown.
      return cut();
    }
    pipeCounted(answer, response, (bytes) => forward.spend(bytes, 'in'), cut);
  });
}

// Content-Length stays where the body is passed on whole; chunked or none is Node's to frame.
function withoutFraming(headers: string[], withoutBody: boolean): string[] {
  if (!withoutBody) return headers;
  const out: string[] = [];
  for (let at = 0; at + 1 < headers.length; at += 2) if (headers[at]?.toLowerCase() !== 'content-length') out.push(headers[at] ?? '', headers[at + 1] ?? '');
  return out;
}

// With backpressure, counted chunk by chunk: a fast side never piles bytes up in the host.
function pipeCounted(
  from: IncomingMessage,
  to: NodeJS.WritableStream & { once(event: 'drain', listener: () => void): unknown },
  spend: (bytes: number) => boolean,
  cut: () => void,
): void {
  from.on('data', (chunk: Buffer) => {
    if (!spend(chunk.length)) return cut();
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
  from.once('end', () => to.end());
  // Closed before its end: the other side must not wait for the rest.
  from.once('close', () => {
    if (!from.complete) cut();
  });
}
