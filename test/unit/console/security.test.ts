// The cross-site checks of a console POST (SPEC section 7.4): the browser's
// Sec-Fetch-Site and the exact Origin (scheme, host and port), and the
// session machinery behind the cookie.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { checkSameOrigin, CONTENT_SECURITY_POLICY, tokensMatch } from '../../../src/console/security.js';
import { ConsoleSessions, MAX_SESSIONS, SESSION_LIFETIME_MS, sessionCookie } from '../../../src/console/sessions.js';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('checkSameOrigin', () => {
  it.each([
    [{ host: '127.0.0.1:8740', origin: 'http://127.0.0.1:8740', 'sec-fetch-site': 'same-origin' }, { ok: true }],
    [{ host: '127.0.0.1:8740' }, { ok: true }],
    [
      { host: '127.0.0.1:8740', 'sec-fetch-site': 'same-site' },
      { ok: false, reason: 'cross_site_fetch' },
    ],
    [
      { host: '127.0.0.1:8740', 'sec-fetch-site': 'cross-site' },
      { ok: false, reason: 'cross_site_fetch' },
    ],
    [
      { host: '127.0.0.1:8740', 'sec-fetch-site': 'none' },
      { ok: false, reason: 'cross_site_fetch' },
    ],
    // Another port of the same host is another origin.
    [
      { host: '127.0.0.1:8740', origin: 'http://127.0.0.1:9999' },
      { ok: false, reason: 'foreign_origin' },
    ],
    [
      { host: '127.0.0.1:8740', origin: 'null' },
      { ok: false, reason: 'foreign_origin' },
    ],
    [
      { host: '127.0.0.1:8740', origin: 'http://evil.example' },
      { ok: false, reason: 'foreign_origin' },
    ],
    [{ host: 'internal:8740', origin: 'https://console.example.com' }, { ok: true }],
  ])('%j → %j', (headers, verdict) => {
    expect(checkSameOrigin(request(headers), ['https://console.example.com'])).toEqual(verdict);
  });

  it('the CSP allows no inline code, no other origin and no framing', () => {
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
  });

  it('tokensMatch is exact', () => {
    expect(tokensMatch('abc', 'abc')).toBe(true);
    expect([tokensMatch('abd', 'abc'), tokensMatch('ab', 'abc'), tokensMatch(undefined, 'abc'), tokensMatch('', 'abc')]).toEqual([false, false, false, false]);
  });
});

describe('ConsoleSessions', () => {
  it('finds a session by its cookie until it expires; a JWT expiry shortens it', () => {
    const clock = { now: 1_000_000 };
    const sessions = new ConsoleSessions(() => clock.now);
    const session = sessions.open('ops');
    const jwt = sessions.open('oidc-user', clock.now + 60_000);
    const cookie = (id: string) => request({ cookie: `other=1; toolhost_console=${id}` });
    expect(sessions.find(cookie(session.id))?.principal).toBe('ops');
    expect(session.csrfToken).toMatch(/^[\w-]{43}$/);
    expect(session.csrfToken).not.toBe(session.id);
    clock.now += 60_000;
    expect(sessions.find(cookie(jwt.id))).toBeUndefined();
    expect(sessions.find(cookie(session.id))?.principal).toBe('ops');
    clock.now += SESSION_LIFETIME_MS;
    expect(sessions.find(cookie(session.id))).toBeUndefined();
    expect(sessions.find(cookie('forged'))).toBeUndefined();
    expect(sessions.find(request({}))).toBeUndefined();
  });

  it('keeps at most MAX_SESSIONS, dropping the oldest', () => {
    const sessions = new ConsoleSessions();
    const first = sessions.open('a');
    for (let index = 0; index < MAX_SESSIONS; index++) sessions.open(`p${index}`);
    expect(sessions.find(request({ cookie: `toolhost_console=${first.id}` }))).toBeUndefined();
  });

  it('the cookie is HttpOnly and SameSite=Strict, Secure behind HTTPS', () => {
    expect(sessionCookie('v', 60, '/console', false)).toBe('toolhost_console=v; Path=/console; Max-Age=60; HttpOnly; SameSite=Strict');
    expect(sessionCookie('v', 60, '/console', true)).toMatch(/; Secure$/);
  });
});
