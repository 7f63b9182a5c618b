// url.host, url.port and url.scheme with the tricks a hostile argument uses to
// make a request look like it goes somewhere else: userinfo, IPv4 spellings,
// IPv6, internationalised names, trailing dots, backslashes, case, and strings
// that are not URLs at all (which throw: the rule denies).
import { describe, expect, it } from 'vitest';
import { urlHost, urlPort, urlScheme, UrlHelperError } from '../../../../src/policy/rules/url-helpers.js';

describe('url.host', () => {
  it.each([
    ['https://api.github.com/repos', 'api.github.com'],
    ['https://api.github.com@evil.test/', 'evil.test'],
    ['https://user:pass@api.github.com/', 'api.github.com'],
    ['https://evil.test\\@api.github.com/', 'evil.test'],
    ['https://evil.test#@api.github.com/', 'evil.test'],
    ['https://evil.test?@api.github.com/', 'evil.test'],
    ['HTTPS://API.GitHub.COM/', 'api.github.com'],
    ['https://api.github.com./', 'api.github.com'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ['https://bücher.example/', 'xn--bcher-kva.example'],
    ['https://xn--bcher-kva.example/', 'xn--bcher-kva.example'],
    ['https://ａｐｉ.github.com/', 'api.github.com'],
    ['  https://api.github.com/  ', 'api.github.com'],
  ])('%s → %s', (url, host) => {
    expect(urlHost(url)).toBe(host);
  });
});

describe('url.port and url.scheme', () => {
  it.each([
    ['https://api.github.com/', 443, 'https'],
    ['http://api.github.com/', 80, 'http'],
    ['https://api.github.com:443/', 443, 'https'],
    ['https://api.github.com:8443/', 8443, 'https'],
    ['http://api.github.com:0080/', 80, 'http'],
    ['wss://x.example/', 443, 'wss'],
    ['file:///etc/passwd', 0, 'file'],
    ['JavaScript:alert(1)', 0, 'javascript'],
  ])('%s → %i, %s', (url, port, scheme) => {
    expect(urlPort(url)).toBe(port);
    expect(urlScheme(url)).toBe(scheme);
  });
});

describe('strings that are not absolute URLs throw (the rule fails closed)', () => {
  it.each([
    ['a relative URL', '/repos/x'],
    ['a bare host', 'api.github.com'],
    ['a host with a forbidden code point', 'https://exa mple.com/'],
    ['a port out of range', 'https://api.github.com:99999/'],
    ['an invalid IPv4 form', 'http://1.2.3.4.5/'],
    ['not a string', 42],
    ['past the length limit', `https://a.example/${'x'.repeat(70_000)}`],
  ])('%s', (_what, url) => {
    expect(() => urlHost(url)).toThrow(UrlHelperError);
    expect(() => urlPort(url)).toThrow(UrlHelperError);
    expect(() => urlScheme(url)).toThrow(UrlHelperError);
  });
});
