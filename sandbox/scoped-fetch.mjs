// ctx.fetch for isolate and worker tools: http(s) only, only to hosts in the
// manifest's network.allow, redirects followed by hand so every hop is checked
// again, and bodies counted as they arrive; a read_only tool may only send
// GET, HEAD and OPTIONS (egress-methods.mjs). Plain ESM, no imports from src/.
import { isMethodAllowedForClass, READ_ONLY_METHODS } from './egress-methods.mjs';

/** Bytes of a response body kept at most; more fails the call with code `too_large`. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** Bytes of a request body sent at most. */
export const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 5;

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
  const allow = options.allow.map(parseAllowEntry).filter((entry) => entry !== undefined);
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const onDenied = options.onDenied ?? (() => {});

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

  function checkUrl(raw) {
    let url;
    try {
      url = new URL(String(raw));
    } catch {
      throw fetchError('invalid_argument', 'fetch: the URL is not valid');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw deny(url.href, 'scheme_not_allowed');
    if (url.username !== '' || url.password !== '') throw deny(redactUserinfo(url), 'credentials_in_url');
    if (!isHostAllowed(allow, url)) throw deny(url.href, 'host_not_allowed');
    return url;
  }

  return async function scopedFetch(rawUrl, init = {}) {
    const request = parseInit(init, maxRequestBytes);
    let url = checkUrl(rawUrl);
    // Redirects keep the method or turn it into GET, so checking the first hop suffices.
    if (!isMethodAllowedForClass(options.sideEffect, request.method)) throw deny(url.href, 'method_not_allowed_for_class', `${request.method} is not allowed`);
    let { method, body } = request;
    for (let hop = 0; ; hop += 1) {
      let response;
      try {
        response = await fetch(url, {
          method,
          headers: request.headers,
          body,
          redirect: 'manual',
          signal: options.signal,
        });
      } catch (error) {
        if (options.signal?.aborted) throw fetchError('aborted', 'fetch: the call was stopped');
        throw fetchError('network_error', `fetch: request to ${url.host} failed`);
      }
      const location = response.headers.get('location');
      if (REDIRECT_STATUSES.has(response.status) && location !== null) {
        await response.body?.cancel().catch(() => {});
        if (hop >= maxRedirects) throw fetchError('too_many_redirects', `fetch: more than ${maxRedirects} redirects`);
        let next;
        try {
          next = new URL(location, url);
        } catch {
          throw fetchError('invalid_redirect', 'fetch: the redirect location is not a valid URL');
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') throw deny(next.href, 'redirect_scheme_not_allowed');
        if (!isHostAllowed(allow, next)) throw deny(next.href, 'redirect_host_not_allowed');
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        url = next;
        continue;
      }
      const text = await readBodyBounded(response, maxResponseBytes);
      return {
        status: response.status,
        statusText: response.statusText,
        url: url.href,
        headers: headersToObject(response.headers),
        body: text,
      };
    }
  };
}

/** Whether `url` names a host in the allow list; an entry without a port allows every port. */
export function isHostAllowed(allow, url) {
  const host = normalizeHost(url.hostname);
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  return allow.some((entry) => entry.host === host && (entry.port === undefined || entry.port === port));
}

/** Parses one network.allow entry (`host` or `host:port`, IPv6 in brackets); undefined when malformed. */
export function parseAllowEntry(raw) {
  if (typeof raw !== 'string' || raw === '' || raw.includes('/') || raw.includes('@')) return undefined;
  let url;
  try {
    url = new URL(`http://${raw}`);
  } catch {
    return undefined;
  }
  const explicitPort = /:(\d+)$/.exec(raw);
  return { host: normalizeHost(url.hostname), port: explicitPort ? String(Number(explicitPort[1])) : undefined };
}

const REASON_TEXT = {
  scheme_not_allowed: 'only http and https URLs are allowed',
  credentials_in_url: 'URLs with credentials are not allowed',
  host_not_allowed: 'the host is not in network.allow',
  redirect_scheme_not_allowed: 'the redirect leads to a scheme other than http or https',
  redirect_host_not_allowed: 'the redirect leads to a host not in network.allow',
  method_not_allowed_for_class: `a read_only tool may only send ${READ_ONLY_METHODS.join(', ')}`,
};

function normalizeHost(hostname) {
  return hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
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

async function readBodyBounded(response, maxBytes) {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      const error = fetchError('too_large', `fetch: the response body exceeds ${maxBytes} bytes`);
      error.maxBytes = maxBytes;
      throw error;
    }
    chunks.push(value);
  }
  return new TextDecoder('utf-8').decode(Buffer.concat(chunks));
}

function headersToObject(headers) {
  const result = {};
  for (const [name, value] of headers) result[name] = value;
  return result;
}

function fetchError(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}
