// ctx.fetch checks against a loopback server: allow list, redirects re-checked
// hop by hop, schemes, credentials, body bounds, and the egress admission rule
// (egress-admission.mjs): canonical spellings, address classes, read-only methods.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConnectionLimiter, createScopedFetch, isHostAllowed, parseAllowEntry, type ScopedFetchAttempt, type ScopedFetchDenial } from '../../../sandbox/ctx/scoped-fetch.mjs';

let server: Server;
let port: number;
const seen: Array<{ method: string; url: string; body: string }> = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', body });
      const routes: Record<string, () => void> = {
        '/ok': () => {
          response.writeHead(200, { 'content-type': 'application/json', 'x-custom': 'v' });
          response.end('{"hello":"world"}');
        },
        '/see-other': () => {
          response.writeHead(303, { location: '/ok' });
          response.end();
        },
        '/loop': () => {
          response.writeHead(302, { location: '/loop' });
          response.end();
        },
        '/to-decimal': () => {
          response.writeHead(302, { location: 'http://2130706433/' });
          response.end();
        },
        '/to-file': () => {
          response.writeHead(302, { location: 'file:///etc/passwd' });
          response.end();
        },
        '/to-elsewhere': () => {
          response.writeHead(301, { location: 'http://example.invalid/' });
          response.end();
        },
        '/huge': () => {
          response.writeHead(200);
          response.end(Buffer.alloc(64 * 1024, 97));
        },
      };
      (routes[request.url ?? ''] ?? (() => response.writeHead(404).end()))();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// `SELF` stands for 127.0.0.1:<the test server's port>.
function scoped(allow: string[], extra: { maxResponseBytes?: number; maxRequestBytes?: number; sideEffect?: string; resolve?: (host: string) => Promise<string[]> } = {}) {
  const denials: ScopedFetchDenial[] = [];
  const attempts: ScopedFetchAttempt[] = [];
  const entries = allow.map((entry) => entry.replace('SELF', `127.0.0.1:${port}`));
  const fetch = createScopedFetch({ allow: entries, onDenied: (denial) => denials.push(denial), onAttempt: (attempt) => attempts.push(attempt), ...extra });
  return { fetch, denials, attempts };
}

describe('createScopedFetch', () => {
  it('fetches from an allowed host:port with headers and body', async () => {
    const { fetch, denials } = scoped([`127.0.0.1:${port}`]);
    const response = await fetch(`http://127.0.0.1:${port}/ok`);
    expect(response).toMatchObject({ status: 200, url: `http://127.0.0.1:${port}/ok`, body: '{"hello":"world"}' });
    expect(response.headers['x-custom']).toBe('v');
    expect(denials).toEqual([]);
  });

  it('admits port 443 only for an entry without a port', async () => {
    const { fetch, attempts } = scoped(['127.0.0.1']);
    await expect(fetch(`http://127.0.0.1:${port}/ok`)).rejects.toMatchObject({ code: 'policy_denied' });
    expect(attempts).toEqual([{ kind: 'fetch', host: '127.0.0.1', port, method: 'GET', admitted: false, reason: 'host_not_allowed', address: null }]);
  });

  it('reports an admitted fetch with the address it connected to', async () => {
    const { fetch, attempts } = scoped(['SELF']);
    expect((await fetch(`http://127.0.0.1:${port}/ok`)).status).toBe(200);
    expect(attempts).toEqual([{ kind: 'fetch', host: '127.0.0.1', port, method: 'GET', admitted: true, reason: null, address: '127.0.0.1' }]);
  });

  it('turns a POST into a GET on 303 and sends the body only to the first hop', async () => {
    const { fetch } = scoped([`127.0.0.1:${port}`]);
    seen.length = 0;
    const response = await fetch(`http://127.0.0.1:${port}/see-other`, { method: 'POST', body: 'payload' });
    expect(response.status).toBe(200);
    expect(seen).toEqual([
      { method: 'POST', url: '/see-other', body: 'payload' },
      { method: 'GET', url: '/ok', body: '' },
    ]);
  });

  const refusals: Array<[string, string[], (p: number) => string, string]> = [
    ['a host not allowed', ['example.invalid'], (p) => `http://127.0.0.1:${p}/ok`, 'host_not_allowed'],
    ['another port of an allowed host', ['127.0.0.1:1'], (p) => `http://127.0.0.1:${p}/ok`, 'host_not_allowed'],
    ['a file: URL', ['SELF'], () => 'file:///etc/passwd', 'scheme_not_allowed'],
    ['credentials in the URL', ['SELF'], (p) => `http://user:pw@127.0.0.1:${p}/ok`, 'credentials_in_url'],
    ['a redirect to a host not allowed', ['SELF'], (p) => `http://127.0.0.1:${p}/to-elsewhere`, 'redirect_host_not_allowed'],
    ['a redirect to file:', ['SELF'], (p) => `http://127.0.0.1:${p}/to-file`, 'redirect_scheme_not_allowed'],
    ['an empty allow list', [], (p) => `http://127.0.0.1:${p}/ok`, 'host_not_allowed'],
    ['127.0.0.1 in decimal', ['SELF'], (p) => `http://2130706433:${p}/ok`, 'non_canonical_host'],
    ['127.0.0.1 in octal', ['SELF'], (p) => `http://0177.0.0.1:${p}/ok`, 'non_canonical_host'],
    ['127.0.0.1 in short form', ['SELF'], (p) => `http://127.1:${p}/ok`, 'non_canonical_host'],
    ['IPv4-mapped ::ffff:127.0.0.1', ['SELF'], (p) => `http://[::ffff:127.0.0.1]:${p}/ok`, 'non_canonical_host'],
    ['::1, not named', ['SELF'], (p) => `http://[::1]:${p}/ok`, 'host_not_allowed'],
    ['the metadata address, not named', ['SELF'], () => 'http://169.254.169.254/latest/meta-data/', 'host_not_allowed'],
    ['a name that resolves to loopback, even when allowed', ['localhost:PORT'], (p) => `http://localhost:${p}/ok`, 'address_loopback'],
  ];

  it.each(refusals)('refuses %s with policy_denied, reported once', async (_name, allow, makeUrl, reason) => {
    const { fetch, denials } = scoped(allow.map((entry) => entry.replace('PORT', String(port))));
    await expect(fetch(makeUrl(port))).rejects.toMatchObject({ code: 'policy_denied' });
    expect(denials).toHaveLength(1);
    expect(denials[0]).toMatchObject({ op: 'fetch', reason });
    expect(denials[0]?.target).not.toContain('pw@');
  });

  it('stops a redirect loop', async () => {
    const { fetch } = scoped(['SELF']);
    await expect(fetch(`http://127.0.0.1:${port}/loop`)).rejects.toMatchObject({ code: 'too_many_redirects' });
  });

  it('bounds the response and the request body', async () => {
    const { fetch } = scoped(['SELF'], { maxResponseBytes: 1024, maxRequestBytes: 4 });
    await expect(fetch(`http://127.0.0.1:${port}/huge`)).rejects.toMatchObject({ code: 'too_large', maxBytes: 1024 });
    await expect(fetch(`http://127.0.0.1:${port}/ok`, { method: 'POST', body: 'too long' })).rejects.toMatchObject({
      code: 'too_large',
      maxBytes: 4,
    });
  });

  it('refuses a malformed URL or method as invalid_argument', async () => {
    const { fetch, denials } = scoped(['SELF']);
    await expect(fetch('not a url')).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(fetch(`http://127.0.0.1:${port}/ok`, { method: 'CONNECT' })).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(denials).toEqual([]);
  });
});

describe('createScopedFetch: admission', () => {
  it('holds a read_only tool to GET, HEAD and OPTIONS', async () => {
    const { fetch, denials } = scoped(['SELF'], { sideEffect: 'read_only' });
    seen.length = 0;
    await expect(fetch(`http://127.0.0.1:${port}/ok`, { method: 'POST', body: 'x' })).rejects.toMatchObject({ code: 'policy_denied' });
    await expect(fetch(`http://127.0.0.1:${port}/ok`, { method: 'DELETE' })).rejects.toMatchObject({ code: 'policy_denied' });
    expect(denials.map((denial) => denial.reason)).toEqual(['method_not_allowed_for_class', 'method_not_allowed_for_class']);
    expect((await fetch(`http://127.0.0.1:${port}/ok`, { method: 'HEAD' })).status).toBe(200);
    expect(seen.map((request) => request.method)).toEqual(['HEAD']);
  });

  it('refuses a redirect that spells another host oddly', async () => {
    const { fetch, denials } = scoped(['SELF', '127.0.0.1:80']);
    await expect(fetch(`http://127.0.0.1:${port}/to-decimal`)).rejects.toMatchObject({ code: 'policy_denied' });
    expect(denials[0]?.reason).toBe('non_canonical_host');
  });

  it('resolves names once, through the given resolver, and refuses a private answer', async () => {
    const resolve = async (host: string): Promise<string[]> => (host === 'internal.test' ? ['10.0.0.7'] : []);
    const { fetch, denials } = scoped(['internal.test:80', 'nowhere.test:80'], { resolve });
    await expect(fetch('http://internal.test/')).rejects.toMatchObject({ code: 'policy_denied' });
    // A name that does not resolve is the network's answer, not a denial: its own code, no denial recorded.
    await expect(fetch('http://nowhere.test/')).rejects.toMatchObject({ code: 'host_not_found', reason: 'name_not_resolved' });
    expect(denials.map((denial) => denial.reason)).toEqual(['address_private']);
  });
});

describe('allow entries', () => {
  it.each([
    ['api.github.com', { host: 'api.github.com', port: undefined }],
    ['API.GitHub.com:443', { host: 'api.github.com', port: '443' }],
    ['127.0.0.1:8080', { host: '127.0.0.1', port: '8080' }],
    ['Example.com.:8443', { host: 'example.com', port: '8443' }],
    ['[::1]:80', { host: '::1', port: '80' }],
  ])('parses %s', (raw, expected) => {
    expect(parseAllowEntry(raw)).toEqual(expected);
  });

  it.each(['', 'http://x', 'user@host', 'a/b', 42, '2130706433:80', '127.1', 'host:0', 'host:65536'])('rejects %s', (raw) => {
    expect(parseAllowEntry(raw)).toBeUndefined();
  });

  it('matches default ports by scheme', () => {
    const allow = [{ host: 'example.com', port: '443' }];
    expect(isHostAllowed(allow, new URL('https://example.com/x'))).toBe(true);
    expect(isHostAllowed(allow, new URL('http://example.com/x'))).toBe(false);
    expect(isHostAllowed(allow, new URL('https://example.com.evil.test/x'))).toBe(false);
  });
});

describe('scoped fetch through a proxy (an isolate process)', () => {
  const TOKEN = 'b'.repeat(32);

  // Stands in for the egress proxy's answers: the request as it came, and a 403 with or without the token echoed.
  async function withProxy(echo: boolean, run: (proxyUrl: string, heads: string[]) => Promise<void>): Promise<void> {
    const heads: string[] = [];
    const proxy = createServer((request, response) => {
      heads.push(`${request.method ?? ''} ${request.url ?? ''} ${String(request.headers['proxy-authorization'])}`);
      response.writeHead(403, { 'x-toolhost-refusal': 'address_loopback', ...(echo ? { 'x-toolhost-call': TOKEN } : {}) });
      response.end('refused');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      await run(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, heads);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  }

  it("sends an absolute-URI request with the call's token, and takes the proxy's refusal (token echoed) as policy_denied", async () => {
    await withProxy(true, async (proxyUrl, heads) => {
      const denials: ScopedFetchDenial[] = [];
      const attempts: ScopedFetchAttempt[] = [];
      const fetch = createScopedFetch({
        allow: ['127.0.0.1:8080'],
        proxy: { url: proxyUrl, token: TOKEN },
        onDenied: (denial) => denials.push(denial),
        onAttempt: (attempt) => attempts.push(attempt),
      });
      await expect(fetch('http://127.0.0.1:8080/x?y=1', { headers: { 'Proxy-Authorization': 'Toolhost forged' } })).rejects.toMatchObject({
        code: 'policy_denied',
        reason: 'address_loopback',
      });
      expect(heads).toEqual([`GET http://127.0.0.1:8080/x?y=1 Toolhost ${TOKEN}`]);
      expect(denials).toMatchObject([{ op: 'fetch', reason: 'address_loopback' }]);
      // The proxy reports that attempt itself: nothing is reported twice.
      expect(attempts).toEqual([]);
    });
  });

  it("takes a 403 without the token echoed as the origin's answer (an origin cannot pass a refusal off)", async () => {
    await withProxy(false, async (proxyUrl) => {
      const fetch = createScopedFetch({ allow: ['127.0.0.1:8080'], proxy: { url: proxyUrl, token: TOKEN } });
      await expect(fetch('http://127.0.0.1:8080/x')).resolves.toMatchObject({ status: 403, body: 'refused' });
    });
  });

  it('refuses by name before any connection, and reports that attempt itself', async () => {
    await withProxy(true, async (proxyUrl, heads) => {
      const attempts: ScopedFetchAttempt[] = [];
      const fetch = createScopedFetch({
        allow: ['127.0.0.1:8080'],
        sideEffect: 'read_only',
        proxy: { url: proxyUrl, token: TOKEN },
        onAttempt: (attempt) => attempts.push(attempt),
      });
      await expect(fetch('https://127.0.0.1:8080/x', { method: 'POST', body: 'x' })).rejects.toMatchObject({ code: 'policy_denied', reason: 'method_not_allowed_for_class' });
      await expect(fetch('http://127.0.0.1:9/x')).rejects.toMatchObject({ code: 'policy_denied', reason: 'host_not_allowed' });
      expect(heads).toEqual([]);
      expect(attempts.map((attempt) => [attempt.kind, attempt.reason])).toEqual([
        ['fetch', 'method_not_allowed_for_class'],
        ['fetch', 'host_not_allowed'],
      ]);
    });
  });
});

describe('createConnectionLimiter', () => {
  it('lets `max` through at once, queues the rest in order, and drops a waiter whose signal aborts', async () => {
    const acquire = createConnectionLimiter(2);
    const first = await acquire();
    const second = await acquire();
    const order: string[] = [];
    const controller = new AbortController();
    const aborted = acquire(controller.signal).then(
      () => order.push('aborted one got in'),
      (error: { code?: string }) => order.push(`aborted: ${String(error.code)}`),
    );
    const third = acquire().then((release) => {
      order.push('third');
      return release;
    });
    controller.abort();
    await aborted;
    expect(order).toEqual(['aborted: aborted']);
    first();
    first(); // a second release of the same place frees nothing more
    const releaseThird = await third;
    expect(order).toEqual(['aborted: aborted', 'third']);
    let fourthIn = false;
    const fourth = acquire().then((release) => {
      fourthIn = true;
      return release;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(fourthIn).toBe(false);
    second();
    (await fourth)();
    releaseThird();
  });
});
