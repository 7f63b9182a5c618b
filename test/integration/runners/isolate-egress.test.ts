// ctx.fetch of an isolate tool leaves from its isolate process, through the
// egress proxy of the tool's grant (SPEC 3.2): what the proxy records is the
// call's attempt (plain HTTP as `http`, HTTPS as a `connect` tunnel with TLS
// from the isolate process), each of two concurrent calls on the same process
// gets its own attempts (the call's token, which a tool cannot forge), the
// proxy resolves names itself, and a flood is bounded (connections at once per
// call, so one call's hanging fetches never starve another's; connections per
// call at the proxy). Loopback only.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../../src/log.js';
import { createIsolateRunner } from '../../../src/runner/isolate/isolate-runner.js';
import type { RunSpec } from '../../../src/runner/types.js';
import type { EgressAttempt } from '../../../src/runner/run-types.js';
import { failureOf, jsonOf } from '../../helpers/run-outcomes.js';
import { until } from '../../helpers/wait.js';
import { makeSpec, recordingOptions, useRunnerCleanup } from '../../helpers/fixture-runners.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

const track = useRunnerCleanup();

interface Seen {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** A loopback HTTP server; `hold` decides whether an answer waits (answered by `release`). */
class TestServer {
  readonly server: Server;
  port = 0;
  readonly seen: Seen[] = [];
  open = 0;
  mostOpen = 0;
  private readonly held: ServerResponse[] = [];
  hold: (server: TestServer) => boolean = () => false;

  constructor(private readonly name: string) {
    this.server = createServer((request, response) => {
      this.seen.push({ url: request.url ?? '', headers: request.headers });
      this.open++;
      this.mostOpen = Math.max(this.mostOpen, this.open);
      // Counted down once the answer is handed to the kernel, before the client can have it.
      response.once('finish', () => this.open--);
      request.resume();
      request.once('end', () => {
        this.held.push(response);
        if (!this.hold(this)) this.release();
      });
    });
  }

  release(): void {
    for (const response of this.held.splice(0)) response.end(`${this.name}:${response.req.url ?? ''}`);
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const first = new TestServer('first');
const second = new TestServer('second');
// Stands in for an HTTPS origin: records the first bytes of each connection, then hangs up.
let tlsSink: TcpServer;
let tlsPort = 0;
const tlsFirstBytes: number[] = [];

beforeAll(async () => {
  await Promise.all([first.listen(), second.listen()]);
  tlsSink = createTcpServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', (chunk: Buffer) => {
      tlsFirstBytes.push(chunk[0] ?? -1);
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => tlsSink.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsSink.address() as AddressInfo).port;
});

afterAll(async () => {
  await Promise.all([first.close(), second.close(), new Promise((resolve) => tlsSink.close(resolve))]);
});

function runner(file: string, overrides: Partial<Omit<RunSpec, 'mode'>>, limits?: Record<string, number>) {
  return track(createIsolateRunner(makeSpec('isolate', file, overrides), { logger: createSilentLogger(), services, ...(limits ? { egress: { limits } } : {}) }));
}

function recorded(timeoutMs = 30_000) {
  const attempts: EgressAttempt[] = [];
  return { attempts, options: { ...recordingOptions(timeoutMs), onEgress: (attempt: EgressAttempt) => attempts.push(attempt) } };
}

describe('isolate ctx.fetch through the egress proxy', () => {
  it("is the proxy's attempt of each call: two concurrent calls on one process, each its own, a forged token ignored", async () => {
    const fetcher = runner('fetch.mjs', { networkAllow: [`127.0.0.1:${first.port}`, `127.0.0.1:${second.port}`] });
    // Neither answers until both requests arrived: the two calls are in flight at once.
    first.seen.length = 0;
    second.seen.length = 0;
    const holdUntilBoth = (): boolean => {
      if (first.seen.length + second.seen.length < 2) return true;
      first.release();
      second.release();
      return false;
    };
    first.hold = holdUntilBoth;
    second.hold = holdUntilBoth;
    const forged = { headers: { 'Proxy-Authorization': `Toolhost ${'f'.repeat(32)}`, 'x-probe': 'kept' } };
    const a = recorded();
    const b = recorded();
    const [outA, outB] = await Promise.all([
      fetcher.run({ callId: 'a', args: { url: `http://127.0.0.1:${first.port}/a`, init: forged } }, a.options),
      fetcher.run({ callId: 'b', args: { url: `http://127.0.0.1:${second.port}/b` } }, b.options),
    ]);
    expect(jsonOf(outA)).toMatchObject({ status: 200, body: 'first:/a' });
    expect(jsonOf(outB)).toMatchObject({ status: 200, body: 'second:/b' });
    expect(a.attempts).toEqual([{ kind: 'http', host: '127.0.0.1', port: first.port, method: 'GET', admitted: true, reason: null, address: '127.0.0.1' }]);
    expect(b.attempts).toEqual([{ kind: 'http', host: '127.0.0.1', port: second.port, method: 'GET', admitted: true, reason: null, address: '127.0.0.1' }]);
    // The proxy's rewrite reached the origin: one request per connection, no proxy header, the tool's own header kept.
    const seenA = first.seen.find((seen) => seen.url === '/a');
    expect(seenA?.headers).toMatchObject({ connection: 'close', 'x-probe': 'kept', host: `127.0.0.1:${first.port}` });
    expect(seenA?.headers['proxy-authorization']).toBeUndefined();
    first.hold = () => false;
    second.hold = () => false;
  });

  it('is resolved by the proxy: an allowed name that resolves to loopback is refused there, the tool sees policy_denied', async () => {
    const fetcher = runner('fetch.mjs', { networkAllow: [`localhost:${first.port}`] });
    const { attempts, options } = recorded();
    const outcome = await fetcher.run({ callId: 'name', args: { url: `http://localhost:${first.port}/x`, catch: true } }, options);
    expect(jsonOf(outcome)).toEqual({ caught: { code: 'policy_denied' } });
    expect(attempts).toEqual([
      {
        kind: 'http',
        host: 'localhost',
        port: first.port,
        method: 'GET',
        admitted: false,
        reason: 'address_loopback',
        address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) as string,
      },
    ]);
    expect(options.denials).toMatchObject([{ op: 'fetch', reason: 'address_loopback' }]);
  });

  it('says host_not_found, not policy_denied, for an allowed name that does not resolve (no denial recorded)', async () => {
    // .invalid never resolves (RFC 2606): the proxy's own lookup fails.
    const fetcher = runner('fetch.mjs', { networkAllow: ['nowhere.invalid:80'] });
    const { attempts, options } = recorded();
    const caught = await fetcher.run({ callId: 'dns', args: { url: 'http://nowhere.invalid/x', catch: true } }, options);
    expect(jsonOf(caught)).toEqual({ caught: { code: 'host_not_found' } });
    expect(attempts).toMatchObject([{ kind: 'http', host: 'nowhere.invalid', port: 80, admitted: false, reason: 'name_not_resolved' }]);
    expect(options.denials).toEqual([]);
    // Uncaught, the call fails as the tool's error, carrying the code.
    const thrown = await fetcher.run({ callId: 'dns-thrown', args: { url: 'http://nowhere.invalid/x' } }, recorded().options);
    expect(failureOf(thrown)).toEqual({ code: 'tool_error', details: { errorCode: 'host_not_found' } });
  });

  it('goes to an https URL through a CONNECT tunnel, TLS from the isolate process (the certificate is checked)', async () => {
    const fetcher = runner('fetch.mjs', { networkAllow: [`127.0.0.1:${tlsPort}`] });
    const { attempts, options } = recorded();
    tlsFirstBytes.length = 0;
    const outcome = await fetcher.run({ callId: 'tls', args: { url: `https://127.0.0.1:${tlsPort}/x`, catch: true } }, options);
    // The sink is no TLS server: the handshake fails, and nothing of it is trusted.
    expect(jsonOf(outcome)).toEqual({ caught: { code: 'network_error' } });
    expect(attempts).toEqual([{ kind: 'connect', host: '127.0.0.1', port: tlsPort, method: null, admitted: true, reason: null, address: '127.0.0.1' }]);
    // 0x16: a TLS handshake record, the ClientHello of the isolate process, came through the tunnel.
    expect(tlsFirstBytes).toEqual([0x16]);
  });

  it("holds a read_only tool's https POST to the read-only methods, though a tunnel hides the method from the proxy", async () => {
    const fetcher = runner('fetch.mjs', { networkAllow: [`127.0.0.1:${tlsPort}`], sideEffect: 'read_only' });
    const { attempts, options } = recorded();
    tlsFirstBytes.length = 0;
    const outcome = await fetcher.run({ callId: 'post', args: { url: `https://127.0.0.1:${tlsPort}/x`, init: { method: 'POST', body: 'x' }, catch: true } }, options);
    expect(jsonOf(outcome)).toEqual({ caught: { code: 'policy_denied' } });
    expect(attempts).toEqual([{ kind: 'fetch', host: '127.0.0.1', port: tlsPort, method: 'POST', admitted: false, reason: 'method_not_allowed_for_class', address: null }]);
    expect(tlsFirstBytes).toEqual([]);
  });

  it('bounds a flood of one call: at most 3 connections at once from one call, every fetch settles', async () => {
    const fetcher = runner('fetch-many.mjs', { networkAllow: [`127.0.0.1:${first.port}`] });
    const count = 30;
    first.seen.length = 0;
    first.mostOpen = 0;
    // Each answer waits until 3 requests are open at once, or until every request arrived.
    first.hold = (server) => !(server.open >= 3 || server.seen.length >= count);
    try {
      const { attempts, options } = recorded(60_000);
      const outcome = await fetcher.run({ callId: 'flood', args: { url: `http://127.0.0.1:${first.port}/f`, count } }, options);
      expect(jsonOf(outcome)).toEqual({ '200': count });
      expect(first.mostOpen).toBe(3);
      expect(attempts).toHaveLength(count);
      expect(attempts.every((attempt) => attempt.kind === 'http' && attempt.admitted)).toBe(true);
    } finally {
      first.hold = () => false;
      first.release();
    }
  });

  it("one call's hanging fetches never make another call of the same tool wait for a listener that answers at once", async () => {
    const fetcher = runner('fetch-many.mjs', { networkAllow: [`127.0.0.1:${first.port}`, `127.0.0.1:${second.port}`] });
    first.seen.length = 0;
    // The first listener accepts every request and never answers (until the test ends).
    first.hold = () => true;
    try {
      const hanging = recorded(60_000);
      let isHangingOver = false;
      const hangingCall = fetcher.run({ callId: 'hang', args: { url: `http://127.0.0.1:${first.port}/hang`, count: 16 } }, hanging.options).finally(() => {
        isHangingOver = true;
      });
      // Its share of connections is open and held.
      await until(() => first.seen.length >= 3);
      const quick = await fetcher.run({ callId: 'quick', args: { url: `http://127.0.0.1:${second.port}/q`, count: 1 } }, recorded().options);
      expect(jsonOf(quick)).toEqual({ '200': 1 });
      expect(isHangingOver).toBe(false);
      // The hanging call holds its 3 places; its 13 other fetches wait on them, not on the process's.
      expect(first.seen.length).toBe(3);
      hanging.options.controller.abort();
      expect(failureOf(await hangingCall).code).toBe('cancelled');
    } finally {
      first.hold = () => false;
      first.release();
    }
  });

  it('bounds the connections of one call at the proxy (connection_limit), and the next call has a budget of its own', async () => {
    const fetcher = runner('fetch-many.mjs', { networkAllow: [`127.0.0.1:${first.port}`] }, { maxConnections: 10 });
    const flood = recorded(60_000);
    const outcome = await fetcher.run({ callId: 'many', args: { url: `http://127.0.0.1:${first.port}/m`, count: 25 } }, flood.options);
    expect(jsonOf(outcome)).toEqual({ '200': 10, policy_denied: 15 });
    expect(flood.attempts.filter((attempt) => attempt.admitted)).toHaveLength(10);
    expect(flood.attempts.filter((attempt) => !attempt.admitted).every((attempt) => attempt.reason === 'connection_limit')).toBe(true);
    const next = recorded();
    expect(jsonOf(await fetcher.run({ callId: 'next', args: { url: `http://127.0.0.1:${first.port}/n`, count: 2 } }, next.options))).toEqual({ '200': 2 });
  });
});
