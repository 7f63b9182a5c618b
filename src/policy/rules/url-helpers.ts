// `url.host(u)`, `url.port(u)` and `url.scheme(u)` for policy rules (SPEC
// section 4.1). URLs are parsed by the WHATWG URL Standard (Node's URL, the
// same parser as fetch and the host's egress proxy), so the host a rule sees
// is the host a request goes to: userinfo is not the host
// (`https://api.example.com@evil.test/` is evil.test), IPv4 in any spelling is
// the dotted quad (`http://0x7f.1/` is 127.0.0.1), names are lowercased and
// internationalised names are in their ASCII (xn--) form. A trailing dot is
// removed (`example.com.` is the same DNS name as `example.com`). A string that
// is not an absolute URL throws, and the rule fails closed.

/** Longest URL a helper parses; longer is an error, never a match. */
const MAX_RULE_URL_CHARS = 65_536;

/** Why a URL cannot be judged; the rule that asked fails closed. */
export class UrlHelperError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UrlHelperError';
  }
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443, 'ftp:': 21 };

/** The host a request to `u` goes to: lowercase, ASCII, IPv6 in brackets, no trailing dot. */
export function urlHost(u: unknown): string {
  const host = parseUrl(u).hostname;
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** The port a request to `u` goes to: the explicit one, else the scheme's default, else 0. */
export function urlPort(u: unknown): number {
  const url = parseUrl(u);
  if (url.port !== '') return Number(url.port);
  return DEFAULT_PORTS[url.protocol] ?? 0;
}

/** The scheme of `u`, lowercase, without the colon. */
export function urlScheme(u: unknown): string {
  return parseUrl(u).protocol.slice(0, -1);
}

function parseUrl(u: unknown): URL {
  if (typeof u !== 'string') throw new UrlHelperError('the URL must be a string');
  if (u.length > MAX_RULE_URL_CHARS) throw new UrlHelperError(`the URL is longer than ${MAX_RULE_URL_CHARS} characters`);
  try {
    return new URL(u);
  } catch {
    throw new UrlHelperError('not an absolute URL');
  }
}
