// The isolate process's side of the egress proxy (src/runner/bwrap/egress-proxy.ts):
// one request through it, for scoped-fetch.mjs. Plain HTTP goes as an
// absolute-URI request; HTTPS as `CONNECT host:port`, then TLS to the origin
// from here (the certificate is checked against the system's roots as usual:
// the proxy only carries bytes). Every request carries the call's token
// (`Proxy-Authorization: Toolhost <token>`), so the proxy counts it against
// that call; the proxy's own refusals echo the token (`X-Toolhost-Call`), so
// an origin cannot pass one off. A tool's hop headers are dropped: the
// connection to the proxy is ours, and a tool must not speak for another call.
// Plain ESM, no imports from src/.
import { request as httpRequest } from 'node:http';
import { connect as tlsConnect } from 'node:tls';

/** Bytes of a response's head (status line and headers) read at most (Node's own default, made explicit). */
export const MAX_RESPONSE_HEAD_BYTES = 16 * 1024;

const HOP_HEADERS = new Set(['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'transfer-encoding', 'content-length']);
const PROXY_REASON = /^[a-z][a-z_]{0,63}$/;

/**
 * One request through the egress proxy at `proxy.url`: an absolute-URI request for http, a CONNECT
 * tunnel and TLS from here for https. Resolves with the response (body unread), or with
 * `{ refusal }` when the proxy refused; rejects on a network failure.
 */
export async function proxiedRequest(url, proxy, init) {
  const proxyUrl = new URL(proxy.url);
  const endpoint = { host: proxyUrl.hostname, port: Number(proxyUrl.port || 80) };
  const authorization = `Toolhost ${proxy.token}`;
  const headers = { ...originHeaders(init.headers), host: url.host };
  if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body, 'utf8'));
  const path = `${url.pathname}${url.search}`;
  if (url.protocol === 'http:') {
    const request = httpRequest({
      ...endpoint,
      method: init.method,
      path: `http://${url.host}${path}`,
      headers: { ...headers, 'proxy-authorization': authorization },
      signal: init.signal,
      agent: false,
      maxHeaderSize: MAX_RESPONSE_HEAD_BYTES,
    });
    return awaitResponse(request, init.body, proxy.token);
  }
  const port = Number(url.port || 443);
  const tunnel = await openTunnel(endpoint, `${url.hostname}:${port}`, authorization, proxy.token, init.signal);
  if (tunnel.refusal !== undefined) return tunnel;
  const bare = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // SNI only for a name; the certificate is checked against `host` either way.
  const secure = tlsConnect({ socket: tunnel.socket, host: bare, ...(/^[\d.]+$|:/.test(bare) ? {} : { servername: bare }), ALPNProtocols: ['http/1.1'] });
  const request = httpRequest({
    host: bare,
    port,
    method: init.method,
    path,
    headers,
    signal: init.signal,
    createConnection: () => secure,
    maxHeaderSize: MAX_RESPONSE_HEAD_BYTES,
  });
  return awaitResponse(request, init.body, undefined);
}

// CONNECT host:port at the proxy: the raw socket once it answered 200, or its refusal.
function openTunnel(endpoint, authority, authorization, token, signal) {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      ...endpoint,
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, 'proxy-authorization': authorization },
      signal,
      agent: false,
      maxHeaderSize: MAX_RESPONSE_HEAD_BYTES,
    });
    request.once('connect', (response, socket, head) => {
      if (response.statusCode === 200) {
        if (head.length > 0) socket.unshift(head);
        resolve({ socket });
        return;
      }
      socket.destroy();
      const refused = proxyRefusal(response, token);
      if (refused !== undefined) resolve({ refusal: refused });
      else reject(new Error('the proxy did not open the tunnel'));
    });
    request.once('error', reject);
    request.end();
  });
}

function awaitResponse(request, body, token) {
  return new Promise((resolve, reject) => {
    request.once('response', (response) => {
      const refused = token === undefined ? undefined : proxyRefusal(response, token);
      if (refused !== undefined) {
        response.destroy();
        resolve({ refusal: refused });
        return;
      }
      resolve(asFetched(response));
    });
    request.once('error', reject);
    request.end(body);
  });
}

// The proxy's own refusal (403, its reason, the call's token echoed); a 502 is a network failure.
function proxyRefusal(response, token) {
  if (response.headers['x-toolhost-call'] !== token) return undefined;
  const reason = response.headers['x-toolhost-refusal'];
  if (response.statusCode !== 403 || typeof reason !== 'string' || !PROXY_REASON.test(reason)) return undefined;
  return reason;
}

function originHeaders(headers) {
  const kept = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (!HOP_HEADERS.has(name.toLowerCase())) kept[name] = value;
  return kept;
}

/** A Node response as scoped-fetch reads it: status, flat lower-case headers, the body stream. */
export function asFetched(response) {
  const flat = {};
  for (const [name, value] of Object.entries(response.headers)) flat[name] = Array.isArray(value) ? value.join(', ') : String(value);
  return { status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers: flat, stream: response, destroy: () => response.destroy() };
}

/**
 * At most `max` connections through the proxy at once (one process's calls together): `acquire`
 * waits for a place (or the signal's abort) and resolves with the function that gives it back.
 * @param {number} max
 */
export function createConnectionLimiter(max) {
  let active = 0;
  const waiting = [];
  const next = () => {
    while (active < max && waiting.length > 0) {
      const entry = waiting.shift();
      if (entry.signal?.aborted) continue;
      active += 1;
      entry.resolve(
        once(() => {
          active -= 1;
          next();
        }),
      );
    }
  };
  return (signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(fetchError('aborted', 'fetch: the call was stopped'));
      const entry = { resolve, signal };
      waiting.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          const at = waiting.indexOf(entry);
          if (at !== -1) waiting.splice(at, 1);
          reject(fetchError('aborted', 'fetch: the call was stopped'));
        },
        { once: true },
      );
      next();
    });
}

/**
 * The limiter of one call, under its process's `processAcquire`: a connection takes a place
 * of the call's first (at most `perCall` at once), then one of the process's. A call that
 * holds its share (fetches that hang) waits on its own places, never on those of the
 * process's other calls.
 * @param {number} perCall
 * @param {(signal?: AbortSignal) => Promise<() => void>} processAcquire
 * @returns {(signal?: AbortSignal) => Promise<() => void>}
 */
export function createCallConnectionLimiter(perCall, processAcquire) {
  const callAcquire = createConnectionLimiter(perCall);
  return async (signal) => {
    const releaseCall = await callAcquire(signal);
    try {
      const releaseProcess = await processAcquire(signal);
      return once(() => {
        releaseProcess();
        releaseCall();
      });
    } catch (error) {
      releaseCall();
      throw error;
    }
  };
}

function once(run) {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    run();
  };
}

/** @returns {Error & { code: string }} */
function fetchError(code, message) {
  const error = /** @type {Error & { code: string }} */ (new Error(message));
  error.code = code;
  return error;
}
