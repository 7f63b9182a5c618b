// What the proxy reads from a request Node's strict parser has parsed: CONNECT
// targets (IPv6 with or without brackets), absolute plain-HTTP targets and
// what is not a proxy request, the call token a request carries, and the
// headers sent on: rebuilt without the hop's (and those Connection names),
// Host from the target, never the token.
import { describe, expect, it } from 'vitest';
import { callTokenOf, forwardedHeaders, headerBytes, parseConnectTarget, parseHttpTarget } from '../../../../src/runner/bwrap/egress-request-head.js';

const TOKEN = 'a'.repeat(32);

describe('parseConnectTarget', () => {
  it('reads host:port, IPv6 bracketed or bare', () => {
    expect(parseConnectTarget('api.github.com:443')).toEqual({ ok: true, host: 'api.github.com', port: 443 });
    expect(parseConnectTarget('[::1]:8080')).toEqual({ ok: true, host: '[::1]', port: 8080 });
    expect(parseConnectTarget('::1:8080')).toEqual({ ok: true, host: '[::1]', port: 8080 });
    expect(parseConnectTarget('host')).toEqual({ ok: false, reason: 'malformed_request' });
  });
});

describe('parseHttpTarget', () => {
  it('reads the origin and the origin-form path of an absolute http URL', () => {
    expect(parseHttpTarget('http://127.0.0.1:8080/a?b=1')).toEqual({ ok: true, host: '127.0.0.1', port: 8080, path: '/a?b=1', authority: '127.0.0.1:8080' });
    expect(parseHttpTarget('http://example.com')).toEqual({ ok: true, host: 'example.com', port: 80, path: '/', authority: 'example.com' });
  });

  it.each(['/relative', 'https://example.com/', 'http://user@example.com/', 'http://a b/', 'http://example.com/#frag'])('refuses %j: not a proxy request', (target) => {
    expect(parseHttpTarget(target)).toEqual({ ok: false, reason: 'not_a_proxy_request' });
  });
});

describe('forwardedHeaders', () => {
  it('drops the hop headers and those Connection names, and sets Host from the target', () => {
    const raw = [
      'Host',
      'evil.example',
      'Proxy-Authorization',
      `Toolhost ${TOKEN}`,
      'Connection',
      'keep-alive, X-Private',
      'X-Private',
      'p',
      'Keep-Alive',
      '5',
      'Transfer-Encoding',
      'chunked',
      'Accept',
      '*/*',
      'TE',
      'trailers',
      'Upgrade',
      'h2c',
    ];
    expect(forwardedHeaders(raw, '127.0.0.1:8080')).toEqual(['Host', '127.0.0.1:8080', 'Accept', '*/*']);
    // An answer keeps its own fields but the hop's.
    expect(forwardedHeaders(['Content-Type', 'text/plain', 'Connection', 'close', 'Content-Length', '3'])).toEqual(['Content-Type', 'text/plain', 'Content-Length', '3']);
    // 'A: b\r\n' on the wire.
    expect(headerBytes(['A', 'b'])).toBe(6);
  });
});

describe('call tokens', () => {
  it('reads the token of a request, only of the Toolhost scheme and shape', () => {
    expect(callTokenOf(['Host', 'x', 'Proxy-Authorization', `Toolhost ${TOKEN}`])).toBe(TOKEN);
    expect(callTokenOf(['proxy-authorization', `Basic ${TOKEN}`])).toBeUndefined();
    expect(callTokenOf(['Proxy-Authorization', 'Toolhost xyz'])).toBeUndefined();
  });
});
