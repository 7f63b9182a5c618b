// The host's egress proxy for one sandboxed process (SPEC section 3.2): an
// HTTP proxy on a Unix socket that the sandbox's bridge (egress-bridge.ts)
// forwards its loopback proxy port to, and one more Unix socket per allowed
// destination, where the bridge forwards ordinary TCP clients that connect to
// that name or address directly (a database driver, a fetch that ignores
// HTTP_PROXY). Requests are parsed by Node's own HTTP parser (llhttp, strict:
// no CR or LF inside a field value, no obsolete line folding, no conflicting
// Content-Length and Transfer-Encoding), each request of a kept-alive
// connection like the first: `CONNECT host:port` opens a tunnel (HTTPS and any
// other TCP: not inspected), `METHOD http://host[:port]/path` is re-serialised
// for the origin (egress-http-forward.ts), never passed on as received. Every
// target goes through admitEgress (allow list, canonical spelling, address
// classes, read-only methods), which resolves names itself; the proxy connects
// to the address it returns, never to the name. Every attempt, admitted or
// refused (a request the parser refuses included), is reported; connections,
// concurrency and bytes are bounded so a flood from a tool costs the host a
// fixed, small amount.
//
// Counts and budgets are kept per call in a ledger. A process that serves one
// call at a time (a one-shot or persistent tool, a server) uses the default
// ledger, reset per call. One that serves several at once (an isolate
// process) opens a ledger per call with its own token, which that process's
// ctx.fetch sends as `Proxy-Authorization: Toolhost <token>` on every request
// (a hop header: never forwarded); with `requireCallToken`, a request without
// a known token is refused (`unknown_call`), and closing a call cuts its
// connections.
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer, isIP, type Server as NetServer, type Socket } from 'node:net';
import { lookup } from 'node:dns/promises';
import { admitEgress, isMethodAdmitted, type EgressRules } from '../../../sandbox/shared/egress-admission.mjs';
import type { EgressAttempt } from '../run-types.js';
import { forwardHttpRequest } from './egress-http-forward.js';
import { CALL_TOKEN_ECHO_HEADER, callTokenOf, isCallToken, parseConnectTarget, parseHttpTarget } from './egress-request-head.js';

export { CALL_TOKEN_ECHO_HEADER, CALL_TOKEN_SCHEME, isCallToken } from './egress-request-head.js';

export type { EgressAttempt } from '../run-types.js';

export interface EgressLimits {
  /** Admitted connections (and plain-HTTP requests) per call. */
  readonly maxConnections: number;
  /** Connections open at once (admitted or still sending their head). */
  readonly maxConcurrent: number;
  /** Attempts per call (admitted and refused); past it connections are closed unanswered and unlogged. */
  readonly maxAttempts: number;
  /** Bytes per call, both directions of every connection together. */
  readonly maxBytes: number;
  /** Bytes of a request head. */
  readonly maxHeadBytes: number;
  /** How long a client may take to send its head, and an upstream to accept. */
  readonly headTimeoutMs: number;
  readonly connectTimeoutMs: number;
}

export const DEFAULT_EGRESS_LIMITS: EgressLimits = {
  maxConnections: 64,
  maxConcurrent: 16,
  maxAttempts: 256,
  maxBytes: 64 * 1024 * 1024,
  maxHeadBytes: 16 * 1024,
  headTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
};

/** What one call did through the proxy. */
export interface EgressCounts {
  admitted: number;
  refused: number;
  bytesOut: number;
  bytesIn: number;
}

/** A destination an ordinary TCP client reaches directly (egress-network.ts): the allow entry's host and port. */
interface DirectDestination {
  readonly host: string;
  readonly port: number;
}

interface EgressProxyOptions {
  readonly rules: EgressRules;
  readonly limits: EgressLimits;
  /** Called for every attempt of the default ledger (up to maxAttempts per call). */
  readonly onAttempt: (attempt: EgressAttempt) => void;
  /** Called once per call when an attempt or byte limit is reached. */
  readonly onLimit?: (limit: 'attempts' | 'connections' | 'bytes') => void;
  /** Only requests that name an open call's token are served (a process with several calls at once). */
  readonly requireCallToken?: boolean;
}

/** One call's counts, budget and sockets. */
interface Ledger {
  readonly counts: EgressCounts;
  attempts: number;
  readonly limitsReported: Set<string>;
  readonly sockets: Set<Socket>;
  readonly onAttempt: (attempt: EgressAttempt) => void;
  readonly token?: string;
}

type Target = Omit<EgressAttempt, 'admitted' | 'reason' | 'address'>;

/** A client connection: whether it came in over the cap, was refused already, and the call its last request belonged to. */
type ClientSocket = Socket & { isClient?: boolean; isCrowded?: boolean; isRefused?: boolean; ledger?: Ledger };

const NO_TARGET: Target = { kind: 'malformed', host: '', port: null, method: null };

/** The proxy server of one grant; `reset()` starts a new call's counters and budget. */
export class EgressProxy {
  /** The default ledger's counts (calls without a token). */
  readonly counts: EgressCounts;
  private readonly server: HttpServer;
  private readonly directServers: NetServer[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly fallback: Ledger;
  private readonly calls = new Map<string, Ledger>();
  private isClosed = false;
  private readonly rules: EgressRules;

  constructor(private readonly options: EgressProxyOptions) {
    // getaddrinfo runs on libuv's thread pool (4 threads, shared with the host's file I/O):
    // one process's lookups take at most MAX_LOOKUPS_IN_FLIGHT of them, however hard it floods.
    this.rules = { ...options.rules, resolve: limitConcurrency(options.rules.resolve ?? resolveSystem, MAX_LOOKUPS_IN_FLIGHT) };
    const { limits } = options;
    // Node's parser, strict whatever the process's --insecure-http-parser says; Host comes from the target.
    this.server = createHttpServer({
      insecureHTTPParser: false,
      maxHeaderSize: limits.maxHeadBytes,
      requireHostHeader: false,
      headersTimeout: limits.headTimeoutMs,
      requestTimeout: 0,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headTimeoutMs / 4))),
    });
    this.server.maxHeadersCount = MAX_HEADER_FIELDS;
    this.server.maxConnections = limits.maxConcurrent * 2;
    this.server.on('connection', (client: Socket) => this.accept(client, true));
    // Whatever goes wrong with one connection ends that connection, never the host.
    this.server.on('request', (request: IncomingMessage, response: ServerResponse) => void this.onRequest(request, response).catch(() => request.socket.destroy()));
    this.server.on('connect', (request: IncomingMessage, client: Socket, rest: Buffer) => void this.onConnect(request, client, rest).catch(() => client.destroy()));
    this.server.on('upgrade', (request: IncomingMessage, client: Socket) =>
      this.refuseUnparsed(client, { ...NO_TARGET, kind: 'http', method: request.method ?? null }, 'upgrade_not_supported', 403),
    );
    this.server.on('clientError', (error: NodeJS.ErrnoException, client: Socket) => this.onClientError(error, client));
    this.fallback = newLedger(options.onAttempt);
    this.counts = this.fallback.counts;
  }

  /** Listens on a Unix socket path (the HTTP proxy). */
  listen(path: string): Promise<void> {
    return listenOn(this.server, path);
  }

  /** Listens on a Unix socket path where every connection is a tunnel to `destination` (the bridge of a direct TCP client). */
  listenDirect(path: string, destination: DirectDestination): Promise<void> {
    const server = createNetServer((client) => void this.onDirect(client, destination).catch(() => client.destroy()));
    server.maxConnections = this.options.limits.maxConcurrent * 2;
    this.directServers.push(server);
    return listenOn(server, path);
  }

  /** A new call: fresh counters and budget (a persistent process serves calls one after another). */
  reset(): void {
    Object.assign(this.counts, { admitted: 0, refused: 0, bytesOut: 0, bytesIn: 0 });
    this.fallback.attempts = 0;
    this.fallback.limitsReported.clear();
  }

  /** A call of its own, beside others: requests that carry `token` count here and go to `onAttempt`. */
  openCall(token: string, onAttempt: (attempt: EgressAttempt) => void): void {
    if (!isCallToken(token) || this.calls.has(token)) throw new TypeError('a call token must be new and 32 hex digits');
    this.calls.set(token, newLedger(onAttempt, token));
  }

  /** What call `token` did so far (zeros once it is closed). */
  callCounts(token: string): EgressCounts {
    const ledger = this.calls.get(token);
    return ledger === undefined ? { admitted: 0, refused: 0, bytesOut: 0, bytesIn: 0 } : { ...ledger.counts };
  }

  /** The call is over: its token is refused from now on and its connections are cut. */
  closeCall(token: string): void {
    const ledger = this.calls.get(token);
    if (ledger === undefined) return;
    this.calls.delete(token);
    for (const socket of ledger.sockets) socket.destroy();
  }

  /** Stops listening and cuts every connection. */
  close(): Promise<void> {
    this.isClosed = true;
    for (const socket of this.sockets) socket.destroy();
    const servers: Array<HttpServer | NetServer> = [this.server, ...this.directServers];
    return Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(() => undefined);
  }

  // `speaksHttp`: the proxy's own socket (a refusal is an HTTP answer); else a direct destination's (a refusal closes it).
  private accept(client: ClientSocket, speaksHttp: boolean): void {
    this.track(client);
    client.on('error', () => undefined);
    if (this.isClosed) return void client.destroy();
    // Without tokens the call is known before the head: past its budget, nothing is read at all.
    if (this.options.requireCallToken !== true && this.fallback.attempts >= this.options.limits.maxAttempts) return this.dropOverBudget(this.fallback, client);
    // Two sockets per admitted connection: the cap counts client sockets only.
    const open = this.openClients();
    client.isClient = true;
    client.isCrowded = open >= this.options.limits.maxConcurrent;
    // With tokens, a crowded connection is refused once its head names the call it belongs to; a
    // direct one (no tokens there) in tunnel(), once it is counted on its call.
    if (client.isCrowded && speaksHttp && this.options.requireCallToken !== true) this.refuseUnparsed(client, NO_TARGET, 'too_many_connections', 403);
  }

  // A plain-HTTP request (each one of a kept-alive connection, checked like the first).
  private async onRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const client = request.socket as ClientSocket;
    if (client.isRefused === true) return void client.destroy();
    const method = request.method ?? '';
    const parsed = parseHttpTarget(request.url ?? '');
    const target: Target = parsed.ok ? { kind: 'http', host: parsed.host.slice(0, 256), port: parsed.port, method } : { ...NO_TARGET, method };
    const call = this.claim(client, callTokenOf(request.rawHeaders));
    if (call === undefined) return;
    const refuse = (reason: string, address?: string, host?: string): void => {
      this.record(call, { ...target, host: host ?? target.host }, reason, address);
      // Its answer closes the connection: nothing after it is read as a request.
      client.isRefused = true;
      refuseResponse(response, reason, 403, call.token);
    };
    if (call === this.fallback && this.options.requireCallToken === true) return refuse('unknown_call');
    if (client.isCrowded === true) return refuse('too_many_connections');
    if (!parsed.ok) return refuse(parsed.reason);
    if (call.counts.admitted >= this.options.limits.maxConnections) {
      this.reportLimit(call, 'connections');
      return refuse('connection_limit');
    }
    const readOnly = this.options.rules.readOnly === true;
    if (!isMethodAdmitted(readOnly, method)) return refuse('method_not_allowed_for_class');
    // RFC 9112 section 6.3: a request whose last transfer coding is not chunked has no reliable length.
    const transferEncoding = request.headers['transfer-encoding'];
    if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') return refuse('malformed_request');
    // A read_only tool's GET carries no body: one that says otherwise is refused, never forwarded.
    if (readOnly && (transferEncoding !== undefined || (request.headers['content-length'] ?? '0') !== '0')) return refuse('body_not_allowed');
    const admission = await admitEgress(this.rules, { host: parsed.host, port: parsed.port, method });
    if (!admission.ok) return refuse(admission.reason, admission.address, admission.host);
    if (this.isClosed || client.destroyed) return;
    this.record(call, { ...target, host: admission.host }, null, admission.address);
    forwardHttpRequest(request, response, {
      address: admission.address,
      family: admission.family,
      port: admission.port,
      path: parsed.path,
      authority: parsed.authority,
      withoutBody: readOnly,
      connectTimeoutMs: this.options.limits.connectTimeoutMs,
      maxHeadBytes: this.options.limits.maxHeadBytes,
      spend: (bytes, direction) => this.count(call, bytes, direction),
      onSocket: (upstream) => this.own(call, upstream),
      onUnreachable: () => refuseResponse(response, 'upstream_unreachable', 502, call.token),
      onUnwritable: () => {
        client.isRefused = true;
        refuseResponse(response, 'malformed_request', 400, call.token);
      },
    });
  }

  // `CONNECT host:port`: a tunnel, once admitted (the parser hands the connection over).
  private async onConnect(request: IncomingMessage, client: ClientSocket, rest: Buffer): Promise<void> {
    if (client.isRefused === true) return void client.destroy();
    const parsed = parseConnectTarget(request.url ?? '');
    const target: Target = parsed.ok ? { kind: 'connect', host: parsed.host.slice(0, 256), port: parsed.port, method: null } : NO_TARGET;
    const call = this.claim(client, callTokenOf(request.rawHeaders));
    if (call === undefined) return;
    if (call === this.fallback && this.options.requireCallToken === true) return this.refuseRaw(client, call, target, 'unknown_call');
    if (!parsed.ok) return this.refuseRaw(client, call, target, parsed.reason);
    await this.tunnel(client, call, target, { host: parsed.host, port: parsed.port }, rest, true);
  }

  // A direct TCP client bridged from the sandbox: a tunnel to the one destination of its socket.
  private async onDirect(client: ClientSocket, destination: DirectDestination): Promise<void> {
    this.accept(client, false);
    if (client.destroyed) return;
    const target: Target = { kind: 'tcp', host: destination.host.slice(0, 256), port: destination.port, method: null };
    const call = this.claim(client, undefined);
    if (call === undefined) return;
    if (this.options.requireCallToken === true) {
      this.record(call, target, 'unknown_call');
      return void client.destroy();
    }
    // Without an HTTP head there is nothing to answer a refusal with: the connection is closed.
    // The admission reads an IPv6 literal as a URL writes it, in brackets.
    const host = isIP(destination.host) === 6 ? `[${destination.host}]` : destination.host;
    await this.tunnel(client, call, target, { host, port: destination.port }, Buffer.alloc(0), false);
  }

  // Admits, connects and splices one tunnel (CONNECT or direct); refusals are recorded and answered.
  private async tunnel(client: ClientSocket, call: Ledger, target: Target, destination: DirectDestination, rest: Buffer, isHttp: boolean): Promise<void> {
    const refuse = (reason: string, address?: string, host?: string, status = 403): void => {
      if (isHttp) this.refuseRaw(client, call, { ...target, host: host ?? target.host }, reason, address, status);
      else {
        this.record(call, { ...target, host: host ?? target.host }, reason, address);
        client.destroy();
      }
    };
    if (client.isCrowded === true) return refuse('too_many_connections');
    if (call.counts.admitted >= this.options.limits.maxConnections) {
      this.reportLimit(call, 'connections');
      return refuse('connection_limit');
    }
    const admission = await admitEgress(this.rules, { host: destination.host, port: destination.port });
    if (!admission.ok) return refuse(admission.reason, admission.address, admission.host);
    if (this.isClosed || client.destroyed) return;
    this.record(call, { ...target, host: admission.host }, null, admission.address);
    const upstream = connect({ host: admission.address, port: admission.port, family: admission.family });
    this.own(call, upstream);
    let isConnected = false;
    upstream.on('error', () => {
      if (isConnected || client.destroyed) return;
      if (isHttp) client.end(refusalHead('upstream_unreachable', 502, call.token));
      else client.destroy();
    });
    upstream.setTimeout(this.options.limits.connectTimeoutMs, () => upstream.destroy(new Error('connect timeout')));
    upstream.once('connect', () => {
      isConnected = true;
      upstream.setTimeout(0);
      if (isHttp) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      this.splice(call, client, upstream, rest);
    });
  }

  /**
   * The ledger a connection's request counts on (its token's call, or the default one), with
   * one attempt taken from it now, before anything is admitted: connections still being
   * admitted can so never pass maxAttempts. Past the budget: closed unanswered, undefined.
   */
  private claim(client: ClientSocket, token: string | undefined): Ledger | undefined {
    const named = token === undefined ? undefined : this.calls.get(token);
    const ledger = named ?? this.fallback;
    if (ledger.attempts >= this.options.limits.maxAttempts) {
      this.dropOverBudget(ledger, client);
      return undefined;
    }
    ledger.attempts++;
    client.ledger = ledger;
    this.own(ledger, client);
    return ledger;
  }

  // A request the strict parser refused (bare LF or CR in a field, obsolete folding, conflicting
  // lengths, a head too large or too slow): logged and counted as a refused connection, answered, closed.
  private onClientError(error: NodeJS.ErrnoException, client: ClientSocket): void {
    // After a refusal the rest of the connection is never read as requests.
    if (client.destroyed || client.isRefused === true || error.code === 'ECONNRESET' || error.code === 'EPIPE') return void client.destroy();
    const reason = error.code === 'HPE_HEADER_OVERFLOW' ? 'head_too_large' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'head_timeout' : 'malformed_request';
    this.refuseUnparsed(client, NO_TARGET, reason, reason === 'head_too_large' ? 431 : reason === 'head_timeout' ? 408 : 400, error.code ?? null);
  }

  // A refusal of what came before (or instead of) a parsed request: one attempt of the connection's
  // call, answered where nothing else was written on it yet, then closed.
  private refuseUnparsed(client: ClientSocket, target: Target, reason: string, status: number, detail: string | null = null): void {
    const ledger = this.ledgerOfSocket(client);
    if (ledger.attempts >= this.options.limits.maxAttempts) return this.dropOverBudget(ledger, client);
    ledger.attempts++;
    // A connection that already carried a request may be in the middle of its answer: closed unanswered.
    if (client.ledger !== undefined) {
      this.record(ledger, target, reason, undefined, detail);
      client.isRefused = true;
      return void client.destroy();
    }
    this.refuseRaw(client, ledger, target, reason, undefined, status, detail);
  }

  // The call a connection's requests so far belonged to (the default ledger before any).
  private ledgerOfSocket(client: ClientSocket): Ledger {
    const ledger = client.ledger;
    return ledger !== undefined && (ledger === this.fallback || (ledger.token !== undefined && this.calls.has(ledger.token))) ? ledger : this.fallback;
  }

  private dropOverBudget(ledger: Ledger, client: Socket): void {
    this.reportLimit(ledger, 'attempts');
    ledger.counts.refused++;
    client.destroy();
  }

  // A refusal answered on the raw connection (before or instead of a parsed request), then closed.
  private refuseRaw(client: ClientSocket, call: Ledger, target: Target, reason: string, address?: string, status = 403, detail: string | null = null): void {
    this.record(call, target, reason, address, detail);
    client.isRefused = true;
    if (client.writable) client.end(refusalHead(reason, status, call.token));
    else client.destroy();
  }

  // Bytes both ways, counted against the call's budget; either side closing closes both.
  private splice(call: Ledger, client: Socket, upstream: Socket, rest: Buffer): void {
    client.once('close', () => {
      client.destroy();
      upstream.destroy();
    });
    upstream.once('close', () => (client.writableLength > 0 ? client.end() : client.destroy()));
    this.forward(call, upstream, client, 'in');
    if (rest.length > 0 && this.count(call, rest.length, 'out')) upstream.write(rest);
    this.forward(call, client, upstream, 'out');
    client.once('end', () => upstream.end());
    client.resume();
  }

  // With backpressure: a fast side never piles bytes up in the host while the other side is slow.
  private forward(call: Ledger, from: Socket, to: Socket, direction: 'in' | 'out'): void {
    from.on('data', (chunk: Buffer) => {
      if (!this.count(call, chunk.length, direction)) {
        from.destroy();
        to.destroy();
        return;
      }
      if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
  }

  // False once the call's byte budget is spent: its connections are cut then.
  private count(call: Ledger, bytes: number, direction: 'in' | 'out'): boolean {
    if (direction === 'in') call.counts.bytesIn += bytes;
    else call.counts.bytesOut += bytes;
    if (call.counts.bytesIn + call.counts.bytesOut <= this.options.limits.maxBytes) return true;
    this.reportLimit(call, 'bytes');
    return false;
  }

  private record(call: Ledger, target: Target, reason: string | null, address?: string, detail: string | null = null): void {
    if (reason === null) call.counts.admitted++;
    else call.counts.refused++;
    const attempt: EgressAttempt = { ...target, admitted: reason === null, reason, address: address ?? null, ...(detail === null ? {} : { detail: detail.slice(0, 64) }) };
    try {
      call.onAttempt(attempt);
    } catch {
      // An observer's failure must not turn a refusal into an allow or crash the proxy.
    }
  }

  private reportLimit(call: Ledger, limit: 'attempts' | 'connections' | 'bytes'): void {
    if (call.limitsReported.has(limit)) return;
    call.limitsReported.add(limit);
    this.options.onLimit?.(limit);
  }

  // A socket of the call's (cut when the call closes) and of the proxy's (cut when it closes).
  private own(call: Ledger, socket: Socket): void {
    call.sockets.add(socket);
    socket.once('close', () => call.sockets.delete(socket));
    this.track(socket);
  }

  private track(socket: Socket): void {
    if (this.sockets.has(socket)) return;
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private openClients(): number {
    let open = 0;
    for (const socket of this.sockets) if ((socket as ClientSocket).isClient === true) open++;
    return open;
  }
}

/** Header fields a request may carry (Node's default is 2000). */
const MAX_HEADER_FIELDS = 100;

function newLedger(onAttempt: (attempt: EgressAttempt) => void, token?: string): Ledger {
  return {
    counts: { admitted: 0, refused: 0, bytesOut: 0, bytesIn: 0 },
    attempts: 0,
    limitsReported: new Set(),
    sockets: new Set(),
    onAttempt,
    ...(token === undefined ? {} : { token }),
  };
}

/** Name lookups of one proxy running at once. */
export const MAX_LOOKUPS_IN_FLIGHT = 2;

async function resolveSystem(host: string): Promise<readonly string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

function listenOn(server: HttpServer | NetServer, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      server.on('error', () => undefined);
      resolve();
    });
  });
}

function limitConcurrency<A, R>(run: (arg: A) => Promise<R>, limit: number): (arg: A) => Promise<R> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (arg) => {
    // A finished run hands its slot straight to the next waiter, so `active` never passes the limit.
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await run(arg);
    } finally {
      const next = waiting.shift();
      if (next !== undefined) next();
      else active--;
    }
  };
}

const STATUS_TEXT: Readonly<Record<number, string>> = { 400: 'Bad Request', 403: 'Forbidden', 408: 'Request Timeout', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway' };

// The call's token is echoed so its client can tell the proxy's refusal from an origin's answer.
function refusalHead(reason: string, status: number, token?: string): string {
  const body = `toolhost egress proxy: refused (${reason})\n`;
  const echo = token === undefined ? '' : `${CALL_TOKEN_ECHO_HEADER}: ${token}\r\n`;
  return `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Forbidden'}\r\nContent-Type: text/plain\r\nX-Toolhost-Refusal: ${reason}\r\n${echo}Connection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
}

// The same refusal as an answer to a parsed request; the connection closes after it.
function refuseResponse(response: ServerResponse, reason: string, status: number, token?: string): void {
  if (response.headersSent) return void response.socket?.destroy();
  const body = `toolhost egress proxy: refused (${reason})\n`;
  response.shouldKeepAlive = false;
  response.writeHead(status, STATUS_TEXT[status] ?? 'Forbidden', {
    'Content-Type': 'text/plain',
    'X-Toolhost-Refusal': reason,
    ...(token === undefined ? {} : { [CALL_TOKEN_ECHO_HEADER]: token }),
    Connection: 'close',
    'Content-Length': String(body.length),
  });
  response.end(body);
}
