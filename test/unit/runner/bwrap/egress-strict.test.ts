// The egress proxy parses strictly and re-serialises (RFC 9112): hostile
// request heads against a real listener on an allowed loopback port that
// records every byte it receives. A header value with a bare LF (the smuggled
// POST of a read_only tool), a bare CR, obsolete line folding, conflicting or
// repeated Content-Length and Transfer-Encoding, a transfer coding other than
// chunked: each is refused, counted and reported as a refused attempt with the
// parser's code, and the listener receives nothing. A kept-alive connection's
// second request meets the same checks as its first (a read_only tool's POST
// after a GET is refused); what is forwarded is written afresh (Host from the
// target, hop headers dropped, the body as decoded, never the chunks as sent).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_EGRESS_LIMITS, EgressProxy } from '../../../../src/runner/bwrap/egress-proxy.js';
import type { EgressAttempt } from '../../../../src/runner/run-types.js';

/** A listener that answers every request with a small 200 and records every byte it received, as received. */
interface Recorder {
  readonly server: Server;
  readonly port: number;
  received(): string;
}

async function record(): Promise<Recorder> {
  let bytes = '';
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('ok'));
  });
  // The raw bytes, tapped before the listener's own parser reads them.
  server.on('connection', (socket: Socket) => socket.on('data', (chunk: Buffer) => (bytes += chunk.toString('latin1'))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, received: () => bytes };
}

/** Sends raw bytes on a new proxy connection; resolves with all the proxy answered once it closes. */
function exchange(path: string, bytes: string): Promise<string> {
  return new Promise((done) => {
    const socket = connect(path);
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => done(text));
    socket.write(Buffer.from(bytes, 'latin1'));
  });
}

describe('the egress proxy parses strictly and forwards what it parsed', () => {
  let dir = '';
  let listener: Recorder;
  let proxy: EgressProxy;
  let path = '';
  const attempts: EgressAttempt[] = [];

  const start = async (readOnly: boolean): Promise<void> => {
    proxy = new EgressProxy({ rules: { allow: [`127.0.0.1:${listener.port}`], readOnly }, limits: DEFAULT_EGRESS_LIMITS, onAttempt: (attempt) => attempts.push(attempt) });
    await proxy.listen(path);
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolhost-proxy-strict-'));
    path = join(dir, 'proxy.sock');
    listener = await record();
    attempts.length = 0;
  });

  afterEach(async () => {
    await proxy.close();
    listener.server.closeAllConnections();
    await new Promise((resolve) => listener.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const target = () => `http://127.0.0.1:${listener.port}`;

  it.each([
    [
      'a bare LF in a header value (a smuggled POST)',
      (t: string) => `GET ${t}/ HTTP/1.1\r\nHost: x\r\nX-Note: a\n\nPOST /evil HTTP/1.1\nContent-Length: 0\n\n\r\n\r\n`,
      'HPE_CR_EXPECTED',
    ],
    ['a bare LF ending a header line', (t: string) => `GET ${t}/ HTTP/1.1\r\nHost: x\nX-Note: b\r\n\r\n`, 'HPE_CR_EXPECTED'],
    ['a bare CR in a header value', (t: string) => `GET ${t}/ HTTP/1.1\r\nHost: x\r\nX-Note: a\rPOST /evil\r\n\r\n`, 'HPE_LF_EXPECTED'],
    ['obsolete line folding', (t: string) => `GET ${t}/ HTTP/1.1\r\nHost: x\r\nX-Note: a\r\n POST /evil\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    [
      'Content-Length and Transfer-Encoding together',
      (t: string) => `POST ${t}/ HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      'HPE_INVALID_TRANSFER_ENCODING',
    ],
    ['two Content-Length fields', (t: string) => `POST ${t}/ HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 40\r\n\r\nabc`, 'HPE_UNEXPECTED_CONTENT_LENGTH'],
    [
      'a transfer coding that does not end in chunked',
      (t: string) => `POST ${t}/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n`,
      'HPE_INVALID_TRANSFER_ENCODING',
    ],
  ])('refuses %s: 400, counted and reported as refused, and the listener sees nothing', async (_what, request, parserCode) => {
    await start(false);
    const answer = await exchange(path, request(target()));
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('X-Toolhost-Refusal: malformed_request');
    expect(attempts).toEqual([{ kind: 'malformed', host: '', port: null, method: null, admitted: false, reason: 'malformed_request', address: null, detail: parserCode }]);
    expect(proxy.counts).toMatchObject({ admitted: 0, refused: 1 });
    expect(listener.received()).toBe('');
  });

  it('refuses a Transfer-Encoding other than chunked, which the parser lets by (RFC 9112 section 6.3)', async () => {
    await start(false);
    const answer = await exchange(path, `POST ${target()}/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\nPOST /evil HTTP/1.1\r\nContent-Length: 0\r\n\r\n`);
    expect(answer).toContain('X-Toolhost-Refusal: malformed_request');
    // The rest of the connection (the smuggled POST) is never parsed: one attempt, refused.
    expect(attempts.map((attempt) => [attempt.kind, attempt.reason])).toEqual([['http', 'malformed_request']]);
    expect(listener.received()).toBe('');
  });

  it("checks every request of a kept-alive connection like the first: a read_only tool's POST after its GET is refused and never sent", async () => {
    await start(true);
    const answer = await exchange(path, `GET ${target()}/first HTTP/1.1\r\nHost: x\r\n\r\nPOST ${target()}/evil HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
    // The answers in order: the GET's, then the POST's refusal, which closes the connection.
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nokHTTP\/1\.1 403 Forbidden\r\n/);
    expect(answer).toContain('X-Toolhost-Refusal: method_not_allowed_for_class');
    // Decided side by side (the GET waits for its admission): in either order.
    expect(attempts.map((attempt) => [attempt.kind, attempt.method, attempt.admitted, attempt.reason])).toEqual(
      expect.arrayContaining([
        ['http', 'GET', true, null],
        ['http', 'POST', false, 'method_not_allowed_for_class'],
      ]),
    );
    expect(attempts).toHaveLength(2);
    expect(listener.received()).toContain('GET /first HTTP/1.1');
    expect(listener.received()).not.toContain('POST');
  });

  it("refuses a read_only tool's request that declares a body, whatever its method", async () => {
    await start(true);
    const answer = await exchange(path, `GET ${target()}/ HTTP/1.1\r\nHost: x\r\nContent-Length: 38\r\n\r\nPOST /evil HTTP/1.1\r\nContent-Length: 0\r\n\r\n`);
    expect(answer).toContain('X-Toolhost-Refusal: body_not_allowed');
    expect(listener.received()).toBe('');
  });

  it('writes the forwarded request afresh: Host from the target, no hop headers or token, the body as decoded', async () => {
    await start(false);
    const token = `Toolhost ${'c'.repeat(32)}`;
    const answer = await exchange(
      path,
      `POST ${target()}/a?b=1 HTTP/1.1\r\nHost: elsewhere.example\r\nProxy-Authorization: ${token}\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nX-Kept:   spaced value  \r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const sent = listener.received();
    const head = sent.slice(0, sent.indexOf('\r\n\r\n'));
    expect(head.split('\r\n')[0]).toBe('POST /a?b=1 HTTP/1.1');
    expect(head).toContain(`\r\nHost: 127.0.0.1:${listener.port}`);
    expect(head).toContain('\r\nX-Kept: spaced value');
    expect(head).not.toMatch(/elsewhere|Proxy-Authorization|X-Hop|ext=1/i);
    // Node frames the decoded body anew: the tool's chunk extension is gone.
    expect(sent.slice(sent.indexOf('\r\n\r\n') + 4)).not.toContain('ext');
    expect(dechunk(sent.slice(sent.indexOf('\r\n\r\n') + 4))).toBe('abcde');
  });
});

// The data of a chunked body Node wrote (chunk sizes in hex, each chunk then CRLF, a last chunk of 0).
function dechunk(body: string): string {
  let data = '';
  let rest = body;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!Number.isFinite(size) || size === 0) return data;
    data += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
