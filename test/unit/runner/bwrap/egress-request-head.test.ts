// The proxy's request-head reader: CONNECT targets (IPv6 with or without
// brackets), absolute plain-HTTP URLs rewritten to origin form with the hop
// headers dropped and Connection: close, what is not a proxy request, and the
// call token a request carries (never forwarded).
import { describe, expect, it } from 'vitest';
import { parseRequestHead } from '../../../../src/runner/bwrap/egress-request-head.js';

const TOKEN = 'a'.repeat(32);

describe('parseRequestHead', () => {
  it('reads CONNECT targets', () => {
    expect(parseRequestHead('CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443')).toEqual({ ok: true, kind: 'connect', host: 'api.github.com', port: 443 });
    expect(parseRequestHead('CONNECT [::1]:8080 HTTP/1.1')).toEqual({ ok: true, kind: 'connect', host: '[::1]', port: 8080 });
    expect(parseRequestHead('CONNECT ::1:8080 HTTP/1.0')).toEqual({ ok: true, kind: 'connect', host: '[::1]', port: 8080 });
    expect(parseRequestHead('CONNECT host HTTP/1.1')).toEqual({ ok: false, reason: 'malformed_request' });
  });

  it('rewrites a plain-HTTP request for the origin and drops what belongs to the hop', () => {
    const head = parseRequestHead('POST http://127.0.0.1:8080/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\nContent-Length: 3');
    expect(head).toMatchObject({ ok: true, kind: 'http', method: 'POST', host: '127.0.0.1', port: 8080, hasBody: true });
    if (!head.ok || head.kind !== 'http') return;
    expect(head.forwardHead.toString('latin1')).toBe('POST /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 3\r\nConnection: close\r\n\r\n');
    const bare = parseRequestHead('GET http://example.com HTTP/1.1');
    expect(bare).toMatchObject({ ok: true, host: 'example.com', port: 80, hasBody: false });
    if (bare.ok && bare.kind === 'http') expect(bare.forwardHead.toString('latin1')).toBe('GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n');
  });

  it.each([
    ['GET /relative HTTP/1.1', 'not_a_proxy_request'],
    ['GET https://example.com/ HTTP/1.1', 'not_a_proxy_request'],
    ['GET http://user@example.com/ HTTP/1.1', 'not_a_proxy_request'],
    ['get http://example.com/ HTTP/1.1', 'malformed_request'],
    ['GET http://example.com/ HTTP/2', 'malformed_request'],
    ['GET http://example.com/ HTTP/1.1\r\nno colon here', 'malformed_request'],
  ])('refuses %j as %s', (head, reason) => {
    expect(parseRequestHead(head)).toEqual({ ok: false, reason });
  });
});

describe('call tokens', () => {
  it('reads the token of either kind of request, and never forwards it', () => {
    const auth = `Proxy-Authorization: Toolhost ${TOKEN}`;
    expect(parseRequestHead(`CONNECT 127.0.0.1:443 HTTP/1.1\r\n${auth}`)).toEqual({ ok: true, kind: 'connect', host: '127.0.0.1', port: 443, callToken: TOKEN });
    const plain = parseRequestHead(`GET http://127.0.0.1:80/ HTTP/1.1\r\n${auth}`);
    expect(plain).toMatchObject({ ok: true, kind: 'http', callToken: TOKEN });
    if (plain.ok && plain.kind === 'http') expect(plain.forwardHead.toString('latin1')).not.toContain(TOKEN);
    // Another scheme or a token of the wrong shape is no token.
    expect(parseRequestHead(`CONNECT 127.0.0.1:443 HTTP/1.1\r\nProxy-Authorization: Basic ${TOKEN}`)).not.toHaveProperty('callToken');
    expect(parseRequestHead('CONNECT 127.0.0.1:443 HTTP/1.1\r\nProxy-Authorization: Toolhost xyz')).not.toHaveProperty('callToken');
  });
});
