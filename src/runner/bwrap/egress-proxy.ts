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
import { connect, createServer, type Server, type Socket } from 'node:net';
import { lookup } from 'node:dns/promises';
import { admitEgress, isMethodAdmitted, type EgressRules } from '../../../sandbox/egress-admission.mjs';
import type { EgressAttempt } from '../wire.js';

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
  /** Called for every attempt (up to maxAttempts per call). */
  readonly onAttempt: (attempt: EgressAttempt) => void;
  /** Called once per call when an attempt or byte limit is reached. */
  readonly onLimit?: (limit: 'attempts' | 'connections' | 'bytes') => void;
}

/** The proxy server of one grant; `reset()` starts a new call's counters and budget. */
export class EgressProxy {
  readonly counts: EgressCounts = { admitted: 0, refused: 0, bytesOut: 0, bytesIn: 0 };
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private attempts = 0;
  private limitsReported = new Set<string>();
  private isClosed = false;

  private readonly rules: EgressRules;

  constructor(private readonly options: EgressProxyOptions) {
    // getaddrinfo runs on libuv's thread pool (4 threads, shared with the host's file I/O):
    // one process's lookups take at most MAX_LOOKUPS_IN_FLIGHT of them, however hard it floods.
    this.rules = { ...options.rules, resolve: limitConcurrency(options.rules.resolve ?? resolveSystem, MAX_LOOKUPS_IN_FLIGHT) };
    this.server = createServer({ pauseOnConnect: false }, (client) => this.accept(client));
    this.server.maxConnections = options.limits.maxConcurrent * 2;
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
    this.attempts = 0;
    this.limitsReported.clear();
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
    if (this.attempts >= this.options.limits.maxAttempts) {
      this.reportLimit('attempts');
      this.counts.refused++;
      return void client.destroy();
    }
    // Two sockets per admitted connection: the cap counts client sockets only.
    const open = [...this.sockets].filter((socket) => (socket as TaggedSocket).isClient === true).length;
    (client as TaggedSocket).isClient = true;
    if (open >= this.options.limits.maxConcurrent) {
      this.record({ kind: 'malformed', host: '', port: null, method: null }, 'too_many_connections');
      return void refuseHttp(client, 'too_many_connections');
    }
    this.readHead(client);
  }

  private readHead(client: Socket): void {
    const { maxHeadBytes, headTimeoutMs } = this.options.limits;
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => {
      client.off('data', onData);
      this.record({ kind: 'malformed', host: '', port: null, method: null }, 'head_timeout');
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
        this.record({ kind: 'malformed', host: '', port: null, method: null }, 'head_too_large');
        return refuseHttp(client, 'head_too_large');
      }
      void this.handle(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4));
    };
    client.on('data', onData);
    client.once('close', () => clearTimeout(timer));
  }

  private async handle(client: Socket, head: string, rest: Buffer): Promise<void> {
    const request = parseRequestHead(head);
    if (!request.ok) {
      this.record({ kind: 'malformed', host: '', port: null, method: null }, request.reason);
      return refuseHttp(client, request.reason);
    }
    const described = { kind: request.kind, host: request.host.slice(0, 256), port: request.port, method: request.kind === 'http' ? request.method : null } as const;
    if (this.counts.admitted >= this.options.limits.maxConnections) {
      this.reportLimit('connections');
      this.record(described, 'connection_limit');
      return refuseHttp(client, 'connection_limit');
    }
    if (request.kind === 'http' && !isMethodAdmitted(this.options.rules.readOnly === true, request.method)) {
      this.record(described, 'method_not_allowed_for_class');
      return refuseHttp(client, 'method_not_allowed_for_class');
    }
    // A read_only tool's GET carries no body: what follows its head is never forwarded.
    if (request.kind === 'http' && this.options.rules.readOnly === true && request.hasBody) {
      this.record(described, 'body_not_allowed');
      return refuseHttp(client, 'body_not_allowed');
    }
    const admission = await admitEgress(this.rules, { host: request.host, port: request.port, ...(request.kind === 'http' ? { method: request.method } : {}) });
    if (!admission.ok) {
      this.record({ ...described, host: admission.host ?? described.host }, admission.reason, admission.address);
      return refuseHttp(client, admission.reason);
    }
    if (this.isClosed || client.destroyed) return;
    this.record({ ...described, host: admission.host }, null, admission.address);
    const upstream = connect({ host: admission.address, port: admission.port, family: admission.family });
    this.track(upstream);
    let isConnected = false;
    upstream.on('error', () => {
      if (!isConnected && !client.destroyed) refuseHttp(client, 'upstream_unreachable', 502);
    });
    upstream.setTimeout(this.options.limits.connectTimeoutMs, () => upstream.destroy(new Error('connect timeout')));
    upstream.once('connect', () => {
      isConnected = true;
      upstream.setTimeout(0);
      if (request.kind === 'connect') {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        this.splice(client, upstream, rest, true);
      } else {
        this.count(upstream, request.forwardHead.length, 'out');
        upstream.write(request.forwardHead);
        // A read_only tool's request had no body: nothing more of the client is forwarded.
        this.splice(client, upstream, rest, this.options.rules.readOnly !== true);
      }
    });
  }

  // Bytes both ways, counted against the call's budget; either side closing closes both.
  private splice(client: Socket, upstream: Socket, rest: Buffer, clientToUpstream: boolean): void {
    const stop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', stop);
    upstream.once('close', () => (client.writableLength > 0 ? client.end() : client.destroy()));
    this.forward(upstream, client, 'in');
    if (clientToUpstream) {
      if (rest.length > 0 && this.count(upstream, rest.length, 'out')) upstream.write(rest);
      this.forward(client, upstream, 'out');
      client.once('end', () => upstream.end());
    }
    client.resume();
  }

  // With backpressure: a fast side never piles bytes up in the host while the other side is slow.
  private forward(from: Socket, to: Socket, direction: 'in' | 'out'): void {
    const upstream = direction === 'in' ? from : to;
    from.on('data', (chunk: Buffer) => {
      if (!this.count(upstream, chunk.length, direction)) return;
      if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
  }

  private count(upstream: Socket, bytes: number, direction: 'in' | 'out'): boolean {
    if (direction === 'in') this.counts.bytesIn += bytes;
    else this.counts.bytesOut += bytes;
    if (this.counts.bytesIn + this.counts.bytesOut <= this.options.limits.maxBytes) return true;
    this.reportLimit('bytes');
    upstream.destroy();
    return false;
  }

  private record(target: Omit<EgressAttempt, 'admitted' | 'reason' | 'address'>, reason: string | null, address?: string): void {
    this.attempts++;
    if (reason === null) this.counts.admitted++;
    else this.counts.refused++;
    const attempt: EgressAttempt = { ...target, admitted: reason === null, reason, address: address ?? null };
    try {
      this.options.onAttempt(attempt);
    } catch {
      // An observer's failure must not turn a refusal into an allow or crash the proxy.
    }
  }

  private reportLimit(limit: 'attempts' | 'connections' | 'bytes'): void {
    if (this.limitsReported.has(limit)) return;
    this.limitsReported.add(limit);
    this.options.onLimit?.(limit);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}

type TaggedSocket = Socket & { isClient?: boolean };

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

type RequestHead =
  | { readonly ok: true; readonly kind: 'connect'; readonly host: string; readonly port: number }
  | { readonly ok: true; readonly kind: 'http'; readonly method: string; readonly host: string; readonly port: number; readonly hasBody: boolean; readonly forwardHead: Buffer }
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
    return { ok: true, kind: 'connect', host, port: Number(authority?.[2] ?? bare?.[2]) };
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
  return { ok: true, kind: 'http', method, host, port, hasBody, forwardHead: Buffer.from(forward, 'latin1') };
}

function refuseHttp(client: Socket, reason: string, status = 403): void {
  const body = `toolhost egress proxy: refused (${reason})\n`;
  const text = status === 502 ? 'Bad Gateway' : 'Forbidden';
  client.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\nX-Toolhost-Refusal: ${reason}\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  client.resume();
}
