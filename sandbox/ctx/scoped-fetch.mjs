// ctx.fetch for isolate and worker tools: http(s) only, admitted by the same
// rule as the egress proxy of namespaced processes (egress-admission.mjs:
// allowed host:port, canonical spelling, no loopback, private, link-local or
// metadata address unless named exactly, a read_only tool's methods held to
// GET, HEAD and OPTIONS by egress-methods.mjs), and connected to
// the very address that admission resolved (no second lookup to rebind).
// Redirects are followed by hand so every hop is admitted again, and bodies
// are counted as they arrive. Plain ESM, no imports from src/.
//
// Two ways out. Direct (worker tools, in the host): the request goes to the
// address admission resolved. Through the egress proxy (isolate tools, from
// their isolate process, whose network namespace has nothing else): the
// checks that need no lookup run here first, then the proxy admits again,
// resolves, connects and reports the attempt; plain HTTP goes to the proxy as
// an absolute-URI request, HTTPS through a CONNECT tunnel with TLS to the
// origin from here (certificate checked as usual; egress-client.mjs).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { asFetched, proxiedRequest } from './egress-client.mjs';
import { admitByName, admitEgress, canonicalHost, parseAllowEntry as parseEgressEntry, DEFAULT_EGRESS_PORT } from '../shared/egress-admission.mjs';
import { READ_ONLY_METHODS } from '../shared/egress-methods.mjs';

/** Bytes of a response body kept at most; more fails the call with code `too_large`. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** Bytes of a request body sent at most. */
export const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 5;
export { createConnectionLimiter, MAX_RESPONSE_HEAD_BYTES } from './egress-client.mjs';

const MAX_TARGET_CHARS = 512;
const MAX_HEADERS = 100;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ALLOWED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Builds the fetch function behind ctx.fetch for one call.
 * @param {import('./scoped-fetch.d.mts').ScopedFetchOptions} options
 * @returns {import('./scoped-fetch.d.mts').ScopedFetch}
 */
export function createScopedFetch(options) {
  const rules = { allow: [...options.allow], readOnly: options.sideEffect === 'read_only', ...(options.resolve ? { resolve: options.resolve } : {}) };
  const onAttempt = options.onAttempt ?? (() => {});
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const onDenied = options.onDenied ?? (() => {});
  const proxy = options.proxy;

  function deny(target, reason, prefix) {
    const shown = String(target).slice(0, MAX_TARGET_CHARS);
    try {
      onDenied({ op: 'fetch', target: shown, reason });
    } catch {
      // A failing observer must not turn a refusal into an allow.
    }
    const why = REASON_TEXT[reason] ?? reason;
    const error = fetchError('policy_denied', `fetch refused for ${JSON.stringify(shown)}: ${prefix ? `${prefix}: ` : ''}${why}`);
    error.reason = reason;
    return error;
  }

  function report(url, method, admission) {
    try {
      onAttempt({
        kind: 'fetch',
        host: (admission.host ?? url.hostname).slice(0, 256),
        port: Number(url.port || defaultPort(url)),
        method,
        admitted: admission.ok,
        reason: admission.ok ? null : admission.reason,
        address: admission.address ?? null,
      });
    } catch {
      // An observer's failure must not change the outcome.
    }
  }

  // The URL as the tool wrote it: the WHATWG parser turns 2130706433 or 0177.0.0.1 into
  // 127.0.0.1, so the host is admitted only when it was already written canonically.
  function checkUrl(raw, base) {
    let url;
    try {
      url = new URL(String(raw), base);
    } catch {
      throw fetchError(
        base === undefined ? 'invalid_argument' : 'invalid_redirect',
        base === undefined ? 'fetch: the URL is not valid' : 'fetch: the redirect location is not a valid URL',
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw deny(url.href, base === undefined ? 'scheme_not_allowed' : 'redirect_scheme_not_allowed');
    if (url.username !== '' || url.password !== '') throw deny(redactUserinfo(url), 'credentials_in_url');
    // A redirect to another host must name it as plainly as a first URL (no `http:\\\\2130706433\\`).
    const isSameHost = base !== undefined && url.host === base.host;
    const written = writtenHost(String(raw));
    if (!isSameHost && (written === undefined || canonicalHost(written) !== normalizeHost(url.hostname))) throw deny(url.href, 'non_canonical_host');
    return { url };
  }

  async function admit(url, method, isRedirect) {
    const target = { host: url.hostname, port: Number(url.port || defaultPort(url)), method };
    // Through the proxy, the attempt is the proxy's to report once it sees it; only a refusal here is reported here.
    const admission = proxy === undefined ? await admitEgress(rules, target) : admitByName(rules, target);
    if (proxy === undefined || !admission.ok) report(url, method, admission);
    if (admission.ok) return admission;
    throw refusal(url, admission.reason, method, isRedirect);
  }

  function refusal(url, reason, method, isRedirect) {
    // A name that does not resolve is a fact about the network, not the policy's doing:
    // the tool (and the person reading the journal) must not be told it was denied.
    if (reason === 'name_not_resolved') {
      const error = fetchError('host_not_found', `fetch: the host ${JSON.stringify(url.hostname.slice(0, MAX_TARGET_CHARS))} was not found (its name does not resolve)`);
      error.reason = reason;
      return error;
    }
    const shown = isRedirect && reason === 'host_not_allowed' ? 'redirect_host_not_allowed' : reason;
    return deny(url.href, shown, shown === 'method_not_allowed_for_class' ? `${method} is not allowed` : undefined);
  }

  // One hop: its response (body unread) or the proxy's refusal.
  async function send(url, admission, init) {
    if (proxy === undefined) return pinnedRequest(url, admission, init);
    return proxiedRequest(url, proxy, init);
  }

  return async function scopedFetch(rawUrl, init = {}) {
    const request = parseInit(init, maxRequestBytes);
    let { url } = checkUrl(rawUrl);
    let { method, body } = request;
    for (let hop = 0; ; hop += 1) {
      const admission = await admit(url, method, hop > 0);
      // Connections through the proxy are few at once per process: a hop waits for one.
      const release = proxy?.acquire === undefined ? () => {} : await proxy.acquire(options.signal);
      try {
        let response;
        try {
          response = await send(url, admission, { method, headers: request.headers, body, signal: options.signal });
        } catch {
          if (options.signal?.aborted) throw fetchError('aborted', 'fetch: the call was stopped');
          throw fetchError('network_error', `fetch: request to ${url.host} failed`);
        }
        if (response.refusal !== undefined) throw refusal(url, response.refusal, method, hop > 0);
        const location = response.headers.location;
        if (REDIRECT_STATUSES.has(response.status) && typeof location === 'string') {
          response.destroy();
          if (hop >= maxRedirects) throw fetchError('too_many_redirects', `fetch: more than ${maxRedirects} redirects`);
          const next = checkUrl(location, url).url;
          if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
          }
          url = next;
          continue;
        }
        const text = await readBodyBounded(response, maxResponseBytes, options.signal);
        return {
          status: response.status,
          statusText: response.statusText,
          url: url.href,
          headers: response.headers,
          body: text,
        };
      } finally {
        release();
      }
    }
  };
}

/** The host part of a URL exactly as written (brackets kept), or undefined for a relative or odd one. */
function writtenHost(raw) {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#\\]*@)?(\[[^\]/?#\\]*\]|[^:/?#\\]*)/i.exec(raw);
  return match === null ? undefined : match[1];
}

function defaultPort(url) {
  return url.protocol === 'https:' ? 443 : 80;
}

// One request to the admitted address: the name stays in Host and SNI (and the certificate
// check), but the connection goes where admission looked, never through a second lookup.
function pinnedRequest(url, admission, init) {
  return new Promise((resolve, reject) => {
    const lookup = (_hostname, lookupOptions, callback) => {
      if (lookupOptions?.all) callback(null, [{ address: admission.address, family: admission.family }]);
      else callback(null, admission.address, admission.family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body, 'utf8'));
    const request = send({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(url.port || defaultPort(url)),
      path: `${url.pathname}${url.search}`,
      method: init.method,
      headers,
      lookup,
      ...(url.protocol === 'https:' && canonicalHost(url.hostname) !== undefined && !/^[\d.]+$|:/.test(url.hostname) ? { servername: url.hostname } : {}),
      signal: init.signal,
      agent: false,
    });
    request.once('response', (response) => resolve(asFetched(response)));
    request.once('error', reject);
    request.end(init.body);
  });
}

/** Whether `url` names a host:port in the allow list (names only; addresses are admitEgress's); a bare entry means port 443. */
export function isHostAllowed(allow, url) {
  const host = normalizeHost(url.hostname);
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  return allow.some((entry) => entry.host === host && (entry.port ?? String(DEFAULT_EGRESS_PORT)) === port);
}

/** Parses one network.allow entry (`host` or `host:port`, IPv6 in brackets); undefined when malformed. */
export function parseAllowEntry(raw) {
  const entry = parseEgressEntry(raw);
  return entry === undefined ? undefined : { host: entry.host, port: entry.port === undefined ? undefined : String(entry.port) };
}

const REASON_TEXT = {
  scheme_not_allowed: 'only http and https URLs are allowed',
  credentials_in_url: 'URLs with credentials are not allowed',
  host_not_allowed: 'the host and port are not in network.allow (a bare host means port 443)',
  non_canonical_host: 'the host is not written canonically (an address in decimal, octal, hex or short form, percent-encoding, or a dotted IPv4 inside IPv6)',
  name_not_resolved: 'the host name does not resolve',
  address_loopback: 'the host resolves to a loopback address (allow that exact address to reach it)',
  address_private: 'the host resolves to a private address (allow that exact address to reach it)',
  address_link_local: 'the host resolves to a link-local address',
  address_unique_local: 'the host resolves to a unique-local address',
  address_metadata: 'the host resolves to a cloud metadata address',
  address_unspecified: 'the host resolves to an unspecified address',
  address_multicast: 'the host resolves to a multicast address',
  address_reserved: 'the host resolves to a reserved address',
  bad_port: 'the port is not valid',
  redirect_scheme_not_allowed: 'the redirect leads to a scheme other than http or https',
  redirect_host_not_allowed: 'the redirect leads to a host not in network.allow',
  method_not_allowed_for_class: `a read_only tool may only send ${READ_ONLY_METHODS.join(', ')}`,
};

function normalizeHost(hostname) {
  return hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

function redactUserinfo(url) {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

function parseInit(init, maxRequestBytes) {
  if (typeof init !== 'object' || init === null) return { method: 'GET', headers: {}, body: undefined };
  const method = init.method === undefined ? 'GET' : String(init.method).toUpperCase();
  if (!ALLOWED_METHODS.has(method)) throw fetchError('invalid_argument', 'fetch: unsupported method');
  const headers = {};
  if (init.headers !== undefined && init.headers !== null) {
    if (typeof init.headers !== 'object') throw fetchError('invalid_argument', 'fetch: headers must be an object');
    const pairs = Object.entries(init.headers);
    if (pairs.length > MAX_HEADERS) throw fetchError('invalid_argument', 'fetch: too many headers');
    for (const [name, value] of pairs) headers[String(name)] = String(value);
  }
  let body;
  if (init.body !== undefined && init.body !== null) {
    if (typeof init.body !== 'string') throw fetchError('invalid_argument', 'fetch: body must be a string');
    if (method === 'GET' || method === 'HEAD') throw fetchError('invalid_argument', 'fetch: GET and HEAD take no body');
    if (Buffer.byteLength(init.body, 'utf8') > maxRequestBytes) {
      const error = fetchError('too_large', `fetch: the request body exceeds ${maxRequestBytes} bytes`);
      error.maxBytes = maxRequestBytes;
      throw error;
    }
    body = init.body;
  }
  return { method, headers, body };
}

async function readBodyBounded(response, maxBytes, signal) {
  const chunks = [];
  let total = 0;
  try {
    for await (const chunk of response.stream) {
      total += chunk.byteLength;
      if (total > maxBytes) {
        response.destroy();
        const error = fetchError('too_large', `fetch: the response body exceeds ${maxBytes} bytes`);
        error.maxBytes = maxBytes;
        throw error;
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (/** @type {{ code?: unknown } | undefined} */ (error)?.code === 'too_large') throw error;
    if (signal?.aborted) throw fetchError('aborted', 'fetch: the call was stopped');
    throw fetchError('network_error', 'fetch: the response was cut off');
  }
  return new TextDecoder('utf-8').decode(Buffer.concat(chunks));
}

/** @returns {Error & { code: string, reason?: string, maxBytes?: number }} */
function fetchError(code, message) {
  const error = /** @type {Error & { code: string }} */ (new Error(message));
  error.code = code;
  return error;
}
