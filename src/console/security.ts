// What every console response carries, and what every state-changing request
// must pass (SPEC section 7.4): a strict Content-Security-Policy (scripts and
// styles only from the console itself, nothing inline), no framing, no
// sniffing, no caching, no referrer; and for a POST, the same origin by the
// browser's own account (Origin, Sec-Fetch-Site) plus the session's CSRF token.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The policy: nothing but the console's own scripts, styles and connections; no framing, no inline code. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Headers of every console response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with the console's own forms.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

type CrossSiteVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: 'cross_site_fetch' | 'foreign_origin' };

/**
 * Whether a state-changing request comes from a page of the console itself: a
 * browser's Sec-Fetch-Site must say same-origin and its Origin must be this
 * server's (scheme, host and port: another port of the same host is another
 * origin). A request with neither header does not come from a browser page.
 */
export function checkSameOrigin(req: IncomingMessage, ownOrigins: readonly string[]): CrossSiteVerdict {
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return { ok: false, reason: 'cross_site_fetch' };
  const origin = header(req, 'origin');
  if (origin === undefined) return { ok: true };
  const host = header(req, 'host');
  const own = new Set(ownOrigins);
  if (host !== undefined) own.add(`http://${host}`).add(`https://${host}`);
  return own.has(origin) ? { ok: true } : { ok: false, reason: 'foreign_origin' };
}

/** Constant-time comparison of two tokens of any length. */
export function tokensMatch(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Writes a response with the security headers. */
export function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent) return;
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': contentType, 'content-length': String(bytes.byteLength), ...headers });
  res.end(bytes);
}

/** A 303 to a path of the console (never a URL a request supplied). */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  send(res, 303, 'text/plain; charset=utf-8', '', { location, ...headers });
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
