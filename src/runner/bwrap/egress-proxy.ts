// The host's egress proxy for one sandboxed process (SPEC section 3.2): an
// HTTP proxy on a Unix socket that the sandbox's bridge (egress-bridge.ts)
// forwards its loopback proxy port to. It speaks just enough HTTP/1.1 to
// read one request head: `CONNECT host:port` opens a tunnel (HTTPS and any
// other TCP: not inspected), `METHOD http://host[:port]/path` is forwarded as
// one plain-HTTP request. Every target goes through admitEgress (allow list,
// canonical spelling, address classes, read-only methods), which resolves
// names itself; the proxy connects to the address it returns, never to the
// name. Every attempt is reported; connections, concurrency and bytes are
// bounded so a flood from a tool costs the host a fixed, small amount.
//
// Counts and budgets are kept per call in a ledger. A process that serves one
// call at a time (a one-shot or persistent tool) uses the default ledger,
// reset per call. One that serves several at once (an isolate process) opens
// a ledger per call with its own token, which that process's ctx.fetch sends
// as `Proxy-Authorization: Toolhost <token>` on every request (a hop header:
// never forwarded); with `requireCallToken`, a request without a known token
// is refused (`unknown_call`), and closing a call cuts its connections.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { lookup } from 'node:dns/promises';
import { admitEgress, isMethodAdmitted, type EgressRules } from '../../../sandbox/egress-admission.mjs';
import type { EgressAttempt } from '../wire.js';
import { CALL_TOKEN_ECHO_HEADER, isCallToken, parseRequestHead } from './egress-request-head.js';

export { CALL_TOKEN_ECHO_HEADER, CALL_TOKEN_SCHEME, isCallToken, parseRequestHead } from './egress-request-head.js';

export type { EgressAttempt } from '../wire.js';

export interface EgressLimits {
  /** Admitted connections per call. */
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

export interface EgressProxyOptions {
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

/** The proxy server of one grant; `reset()` starts a new call's counters and budget. */
export class EgressProxy {
  /** The default ledger's counts (calls without a token). */
  readonly counts: EgressCounts;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly fallback: Ledger;
  private readonly calls = new Map<string, Ledger>();
  private isClosed = false;

  private readonly rules: EgressRules;

  constructor(private readonly options: EgressProxyOptions) {
    // getaddrinfo runs on libuv's thread pool (4 threads, shared with the host's file I/O):
    // one process's lookups take at most MAX_LOOKUPS_IN_FLIGHT of them, however hard it floods.
    this.rules = { ...options.rules, resolve: limitConcurrency(options.rules.resolve ?? resolveSystem, MAX_LOOKUPS_IN_FLIGHT) };
    this.server = createServer({ pauseOnConnect: false }, (client) => this.accept(client));
    this.server.maxConnections = options.limits.maxConcurrent * 2;
    this.fallback = newLedger(options.onAttempt);
    this.counts = this.fallback.counts;
  }

  /** Listens on a Unix socket path. */
  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(path, () => {
        this.server.off('error', reject);
        this.server.on('error', () => undefined);
        resolve();
      });
    });
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
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.track(client);
    client.on('error', () => undefined);
    if (this.isClosed) return void client.destroy();
    // Without tokens the call is known before the head: past its budget, nothing is read at all.
    if (this.options.requireCallToken !== true && this.isOverAttempts(this.fallback, client)) return void client.destroy();
    // Two sockets per admitted connection: the cap counts client sockets only.
    const open = [...this.sockets].filter((socket) => (socket as TaggedSocket).isClient === true).length;
    (client as TaggedSocket).isClient = true;
    const isCrowded = open >= this.options.limits.maxConcurrent;
    if (isCrowded && this.options.requireCallToken !== true) {
      this.record(client, this.fallback, { kind: 'malformed', host: '', port: null, method: null }, 'too_many_connections');
      return void refuseHttp(client, 'too_many_connections');
    }
    // With tokens, a crowded connection is refused once its head names the call it belongs to.
    this.readHead(client, isCrowded);
  }

  /**
   * Past the call's attempt budget: true (refuse unanswered). Else the connection takes one of
   * its attempts now, before its head is read or admitted: counted only when recorded, every
   * connection still reading or being admitted passed this check and recorded past the limit.
   */
  private isOverAttempts(ledger: Ledger, client: Socket): boolean {
    const held = (client as TaggedSocket).attemptOf;
    if (held === ledger) return false;
    if (ledger.attempts >= this.options.limits.maxAttempts) {
      this.reportLimit(ledger, 'attempts');
      ledger.counts.refused++;
      return true;
    }
    // Taken from the default ledger at accept, the head named a call: the attempt is that call's.
    if (held !== undefined) held.attempts--;
    ledger.attempts++;
    (client as TaggedSocket).attemptOf = ledger;
    return false;
  }

  private readHead(client: Socket, isCrowded: boolean): void {
    const { maxHeadBytes, headTimeoutMs } = this.options.limits;
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => {
      client.off('data', onData);
      this.record(client, this.fallback, { kind: 'malformed', host: '', port: null, method: null }, 'head_timeout');
      client.destroy();
    }, headTimeoutMs);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1 && head.length <= maxHeadBytes) return;
      clearTimeout(timer);
      client.off('data', onData);
      client.pause();
      if (end === -1 || end > maxHeadBytes) {
        this.record(client, this.fallback, { kind: 'malformed', host: '', port: null, method: null }, 'head_too_large');
        return refuseHttp(client, 'head_too_large');
      }
      void this.handle(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4), isCrowded);
    };
    client.on('data', onData);
    client.once('close', () => clearTimeout(timer));
  }

  private async handle(client: Socket, head: string, rest: Buffer, isCrowded: boolean): Promise<void> {
    const request = parseRequestHead(head);
    if (!request.ok) {
      this.record(client, this.fallback, { kind: 'malformed', host: '', port: null, method: null }, request.reason);
      return refuseHttp(client, request.reason);
    }
    const described = { kind: request.kind, host: request.host.slice(0, 256), port: request.port, method: request.kind === 'http' ? request.method : null } as const;
    const ledger = request.callToken === undefined ? undefined : this.calls.get(request.callToken);
    if (ledger === undefined && this.options.requireCallToken === true) {
      if (this.isOverAttempts(this.fallback, client)) return void client.destroy();
      this.record(client, this.fallback, described, 'unknown_call');
      return refuseHttp(client, 'unknown_call');
    }
    const call = ledger ?? this.fallback;
    if (this.isOverAttempts(call, client)) return void client.destroy();
    call.sockets.add(client);
    client.once('close', () => call.sockets.delete(client));
    const refuse = (reason: string, address?: string, host?: string): void => {
      this.record(client, call, { ...described, host: host ?? described.host }, reason, address);
      refuseHttp(client, reason, 403, call.token);
    };
    if (isCrowded) return refuse('too_many_connections');
    if (call.counts.admitted >= this.options.limits.maxConnections) {
      this.reportLimit(call, 'connections');
      return refuse('connection_limit');
    }
    if (request.kind === 'http' && !isMethodAdmitted(this.options.rules.readOnly === true, request.method)) return refuse('method_not_allowed_for_class');
    // A read_only tool's GET carries no body: what follows its head is never forwarded.
    if (request.kind === 'http' && this.options.rules.readOnly === true && request.hasBody) return refuse('body_not_allowed');
    const admission = await admitEgress(this.rules, { host: request.host, port: request.port, ...(request.kind === 'http' ? { method: request.method } : {}) });
    if (!admission.ok) return refuse(admission.reason, admission.address, admission.host);
    if (this.isClosed || client.destroyed) return;
    this.record(client, call, { ...described, host: admission.host }, null, admission.address);
    const upstream = connect({ host: admission.address, port: admission.port, family: admission.family });
    this.track(upstream);
    call.sockets.add(upstream);
    upstream.once('close', () => call.sockets.delete(upstream));
    let isConnected = false;
    upstream.on('error', () => {
      if (!isConnected && !client.destroyed) refuseHttp(client, 'upstream_unreachable', 502, call.token);
    });
    upstream.setTimeout(this.options.limits.connectTimeoutMs, () => upstream.destroy(new Error('connect timeout')));
    upstream.once('connect', () => {
      isConnected = true;
      upstream.setTimeout(0);
      if (request.kind === 'connect') {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        this.splice(call, client, upstream, rest, true);
      } else {
        this.count(call, upstream, request.forwardHead.length, 'out');
        upstream.write(request.forwardHead);
        // A read_only tool's request had no body: nothing more of the client is forwarded.
        this.splice(call, client, upstream, rest, this.options.rules.readOnly !== true);
      }
    });
  }

  // Bytes both ways, counted against the call's budget; either side closing closes both.
  private splice(call: Ledger, client: Socket, upstream: Socket, rest: Buffer, clientToUpstream: boolean): void {
    const stop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', stop);
    upstream.once('close', () => (client.writableLength > 0 ? client.end() : client.destroy()));
    this.forward(call, upstream, client, 'in');
    if (clientToUpstream) {
      if (rest.length > 0 && this.count(call, upstream, rest.length, 'out')) upstream.write(rest);
      this.forward(call, client, upstream, 'out');
      client.once('end', () => upstream.end());
    }
    client.resume();
  }

  // With backpressure: a fast side never piles bytes up in the host while the other side is slow.
  private forward(call: Ledger, from: Socket, to: Socket, direction: 'in' | 'out'): void {
    const upstream = direction === 'in' ? from : to;
    from.on('data', (chunk: Buffer) => {
      if (!this.count(call, upstream, chunk.length, direction)) return;
      if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
  }

  private count(call: Ledger, upstream: Socket, bytes: number, direction: 'in' | 'out'): boolean {
    if (direction === 'in') call.counts.bytesIn += bytes;
    else call.counts.bytesOut += bytes;
    if (call.counts.bytesIn + call.counts.bytesOut <= this.options.limits.maxBytes) return true;
    this.reportLimit(call, 'bytes');
    upstream.destroy();
    return false;
  }

  private record(client: Socket, call: Ledger, target: Omit<EgressAttempt, 'admitted' | 'reason' | 'address'>, reason: string | null, address?: string): void {
    // Once per connection: one that passed isOverAttempts holds its attempt already.
    if ((client as TaggedSocket).attemptOf !== call) call.attempts++;
    if (reason === null) call.counts.admitted++;
    else call.counts.refused++;
    const attempt: EgressAttempt = { ...target, admitted: reason === null, reason, address: address ?? null };
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

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}

type TaggedSocket = Socket & { isClient?: boolean; attemptOf?: Ledger };

function newLedger(onAttempt: (attempt: EgressAttempt) => void, token?: string): Ledger {
  return { counts: { admitted: 0, refused: 0, bytesOut: 0, bytesIn: 0 }, attempts: 0, limitsReported: new Set(), sockets: new Set(), onAttempt, ...(token === undefined ? {} : { token }) };
}

/** Name lookups of one proxy running at once. */
export const MAX_LOOKUPS_IN_FLIGHT = 2;

async function resolveSystem(host: string): Promise<readonly string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
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

// The call's token is echoed so its client can tell the proxy's refusal from an origin's answer.
function refuseHttp(client: Socket, reason: string, status = 403, token?: string): void {
  const body = `toolhost egress proxy: refused (${reason})\n`;
  const text = status === 502 ? 'Bad Gateway' : 'Forbidden';
  const echo = token === undefined ? '' : `${CALL_TOKEN_ECHO_HEADER}: ${token}\r\n`;
  client.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\nX-Toolhost-Refusal: ${reason}\r\n${echo}Connection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  client.resume();
}
