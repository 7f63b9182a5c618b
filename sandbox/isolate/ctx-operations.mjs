// The ctx calls of the isolate process's calls: ctx.fs and ctx.fetch performed
// here (paths resolve where only the declared roots exist; a fetch goes out
// through the egress proxy of the tool's grant, so what it brings back is
// bounded here and never crosses to the host), progress and log bridged to the
// host as events, and refusals reported as the call's denials and attempts.
// Everything sent to the host is cut to ISOLATE_WIRE_LIMITS first. Importing
// this module does nothing: the main loop (main-loop.mjs) builds one with the
// process's configuration and its way to the host.
import { ISOLATE_WIRE_LIMITS } from '../shared/limits.mjs';
import { readLogLevel } from '../shared/readers.mjs';
import { createScopedFs } from '../ctx/scoped-fs.mjs';
import { createCallConnectionLimiter, createConnectionLimiter } from '../ctx/egress-client.mjs';
import { createScopedFetch } from '../ctx/scoped-fetch.mjs';
import { cut } from './cut.mjs';

/** @typedef {import('../shared/messages.mjs').IsolateInitMessage} IsolateInitMessage */
/** @typedef {import('../shared/messages.mjs').IsolateToHostMessage} IsolateToHostMessage */

/** ctx calls of one call that may wait for an answer at once; the prelude holds the tool to it too. */
export const MAX_PENDING_CTX_CALLS = 32;
/** Linux's PATH_MAX: no longer path names a file; refused before any work on it. */
export const MAX_PATH_CHARS = 4096;
const MAX_FETCH_REQUEST_BYTES = 1024 * 1024;
const MAX_FETCH_HEADERS = 100;
/**
 * Connections through the proxy one call may hold at once. Each running call
 * has an isolate of its own (at most maxIsolates of them), so the process's
 * bound is this times maxIsolates: a call whose fetches hang holds only its
 * own share, and every other call of the process still finds its places.
 */
const MAX_PROXY_CONNECTIONS_PER_CALL = 3;

/**
 * What the ctx operations keep of one call.
 * @typedef {{ id: number, stopped: boolean, events: number, eventBytes: number, denials: number, attempts: number, pending: number,
 *   egressToken: string | undefined, aborter: AbortController | undefined,
 *   fetch: ReturnType<typeof createScopedFetch> | undefined,
 *   fs: ReturnType<typeof createScopedFs> | undefined }} CtxCall
 */

/** A call's ctx state before its first ctx call. @param {number} id @param {unknown} egressToken @returns {CtxCall} */
export function newCtxCall(id, egressToken) {
  return {
    id,
    stopped: false,
    events: 0,
    eventBytes: 0,
    denials: 0,
    attempts: 0,
    pending: 0,
    egressToken: typeof egressToken === 'string' ? egressToken : undefined,
    // Made with the call's first fetch: most calls never fetch, and an abort builds a DOMException.
    aborter: undefined,
    fetch: undefined,
    fs: undefined,
  };
}

/**
 * The ctx operations of one isolate process.
 * @param {{ config: IsolateInitMessage,
 *   send: (message: IsolateToHostMessage) => void,
 *   isRunning: (call: CtxCall) => boolean }} options
 *   `isRunning`: whether the call still runs (not stopped, not answered): what it asks after that is dropped.
 */
export function createCtxOperations({ config, send, isRunning }) {
  // The process's bound stays under the proxy's own (16 at once per process), with room for connections still closing.
  const acquireConnection = config.egress === undefined ? undefined : createConnectionLimiter(MAX_PROXY_CONNECTIONS_PER_CALL * Math.max(1, Number(config.maxIsolates) || 1));

  /**
   * One ctx call from the isolate: `id` 0 is an event (no answer), else `settle(ok, value)`
   * answers it once (value: plain data for the tool).
   * @param {CtxCall} call @param {unknown} id @param {unknown} op @param {unknown} args
   * @param {(ok: boolean, value: unknown) => void} settle
   */
  function handle(call, id, op, args, settle) {
    if (!isRunning(call) || typeof op !== 'string' || !Array.isArray(args)) return;
    if (id === 0) {
      notify(call, op, args);
      return;
    }
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return;
    if (call.pending >= MAX_PENDING_CTX_CALLS) {
      settle(false, { code: 'too_many_pending', message: 'too many ctx calls are pending' });
      return;
    }
    call.pending += 1;
    perform(call, op, args).then(
      (value) => {
        call.pending -= 1;
        settle(true, value);
      },
      (error) => {
        call.pending -= 1;
        settle(false, toFailure(error));
      },
    );
  }

  async function perform(call, op, args) {
    if (op === 'fetch') return fetchThroughProxy(call, args[0], args[1]);
    const { roots, protectedPaths, hiddenPaths } = config;
    // Per call, so each refusal is reported by the call that caused it.
    call.fs ??= createScopedFs({ roots, protectedPaths, hiddenPaths, onDenied: (denial) => reportDenial(call, denial) });
    switch (op) {
      case 'fs.readText':
        return call.fs.readText(stringArg(args[0]));
      case 'fs.writeText':
        return call.fs.writeText(stringArg(args[0]), stringArg(args[1]));
      case 'fs.list':
        return call.fs.list(stringArg(args[0]));
      case 'fs.stat':
        return call.fs.stat(stringArg(args[0]));
      default:
        throw ctxError('invalid_argument', 'unknown ctx operation');
    }
  }

  function reportDenial(call, denial) {
    if (!isRunning(call) || call.denials >= ISOLATE_WIRE_LIMITS.maxDenialsPerCall) return;
    call.denials += 1;
    send({
      type: 'denied',
      id: call.id,
      op: cut(String(denial.op), ISOLATE_WIRE_LIMITS.maxCodeChars),
      target: cut(String(denial.target), ISOLATE_WIRE_LIMITS.maxTargetChars),
      reason: cut(String(denial.reason), ISOLATE_WIRE_LIMITS.maxCodeChars),
    });
  }

  function notify(call, op, args) {
    if (call.events >= ISOLATE_WIRE_LIMITS.maxEventsPerCall) return;
    if (op === 'progress') {
      const [progress, total, message] = args;
      if (typeof progress !== 'number' || !Number.isFinite(progress)) return;
      const text = typeof message === 'string' ? cut(message, ISOLATE_WIRE_LIMITS.maxMessageChars) : undefined;
      if (!chargeEvent(call, text)) return;
      send({
        type: 'progress',
        id: call.id,
        progress,
        ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}),
        ...(text !== undefined ? { message: text } : {}),
      });
    } else if (op === 'log') {
      const [rawLevel, rawMessage] = args;
      const level = readLogLevel(rawLevel);
      const text = cut(typeof rawMessage === 'string' ? rawMessage : String(rawMessage), ISOLATE_WIRE_LIMITS.maxMessageChars);
      if (!chargeEvent(call, text)) return;
      send({ type: 'log', id: call.id, level, message: text });
    }
  }

  // ctx.fetch: bounded in size here, admitted by name here (allow list, spelling, the
  // read_only methods, which a tunnel would hide from the proxy), then sent through the
  // proxy, which admits again, resolves and reports the attempt to the call's journal.
  function fetchThroughProxy(call, rawUrl, rawInit) {
    if (typeof rawUrl !== 'string') throw ctxError('invalid_argument', 'fetch: the URL must be a string');
    if (rawUrl.length > ISOLATE_WIRE_LIMITS.maxUrlChars) throw ctxError('invalid_argument', `fetch: the URL is longer than ${ISOLATE_WIRE_LIMITS.maxUrlChars} characters`);
    const init = typeof rawInit === 'object' && rawInit !== null ? rawInit : {};
    const method = typeof init.method === 'string' ? init.method : undefined;
    if (method !== undefined && method.length > 16) throw ctxError('invalid_argument', 'fetch: unsupported method');
    let headers;
    if (typeof init.headers === 'object' && init.headers !== null) {
      const pairs = Object.entries(init.headers);
      if (pairs.length > MAX_FETCH_HEADERS) throw ctxError('invalid_argument', 'fetch: too many headers');
      headers = {};
      let headerBytes = 0;
      for (const [name, value] of pairs) {
        const text = String(value);
        headerBytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(text, 'utf8');
        if (headerBytes > ISOLATE_WIRE_LIMITS.maxFetchHeaderBytes) throw ctxError('invalid_argument', 'fetch: the request headers are too large');
        headers[name] = text;
      }
    }
    const body = typeof init.body === 'string' ? init.body : undefined;
    if (body !== undefined && Buffer.byteLength(body, 'utf8') > MAX_FETCH_REQUEST_BYTES) {
      throw Object.assign(ctxError('too_large', `fetch: the request body exceeds ${MAX_FETCH_REQUEST_BYTES} bytes`), { maxBytes: MAX_FETCH_REQUEST_BYTES });
    }
    call.fetch ??= newCallFetch(call);
    return call.fetch(rawUrl, { ...(method !== undefined ? { method } : {}), ...(headers !== undefined ? { headers } : {}), ...(body !== undefined ? { body } : {}) });
  }

  function newCallFetch(call) {
    const { egress, sideEffect } = config;
    // No allow list (or no token): every request is refused by name, nothing leaves.
    const acquire = acquireConnection === undefined ? undefined : createCallConnectionLimiter(MAX_PROXY_CONNECTIONS_PER_CALL, acquireConnection);
    const proxy = egress !== undefined && call.egressToken !== undefined ? { url: egress.proxyUrl, token: call.egressToken, acquire } : undefined;
    return createScopedFetch({
      allow: proxy === undefined || egress === undefined ? [] : egress.allow,
      ...(sideEffect !== undefined ? { sideEffect } : {}),
      // Never a lookup here: without a proxy nothing passes admitByName's allow list anyway.
      proxy: proxy ?? { url: 'http://127.0.0.1:1', token: '0'.repeat(32) },
      signal: (call.aborter ??= new AbortController()).signal,
      maxRequestBytes: MAX_FETCH_REQUEST_BYTES,
      onDenied: (denial) => reportDenial(call, denial),
      onAttempt: (attempt) => reportAttempt(call, attempt),
    });
  }

  /** A fetch refused here, before any connection: counted as the call's attempt (the proxy reports the rest). */
  function reportAttempt(call, attempt) {
    if (!isRunning(call) || call.attempts >= ISOLATE_WIRE_LIMITS.maxDenialsPerCall) return;
    call.attempts += 1;
    send({
      type: 'egress',
      id: call.id,
      host: cut(String(attempt.host), 256),
      port: Number.isInteger(attempt.port) ? attempt.port : null,
      method: typeof attempt.method === 'string' ? cut(attempt.method, 16) : null,
      reason: cut(String(attempt.reason), 64),
    });
  }

  return { handle };
}

/** Counts one event against the call's budgets; false when it must be dropped. */
function chargeEvent(call, text) {
  const bytes = text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  if (call.events >= ISOLATE_WIRE_LIMITS.maxEventsPerCall || call.eventBytes + bytes > ISOLATE_WIRE_LIMITS.maxEventBytesPerCall) return false;
  call.events += 1;
  call.eventBytes += bytes;
  return true;
}

/** A thrown error as plain data for the tool: only the code, the message and the limits cross. */
function toFailure(error) {
  if (typeof error === 'object' && error !== null) {
    // Only the sandbox modules' own errors (snake_case codes, path-free messages) pass
    // their message on; a raw Node error could name a host path.
    const isOwn = typeof error.code === 'string' && /^[a-z][a-z_]{0,63}$/.test(error.code);
    if (!isOwn) return { code: 'io_error', message: 'the ctx call failed' };
    return {
      code: error.code,
      message: typeof error.message === 'string' ? cut(error.message, ISOLATE_WIRE_LIMITS.maxIvmMessageChars) : 'the ctx call failed',
      ...(typeof error.maxBytes === 'number' ? { maxBytes: error.maxBytes } : {}),
      ...(typeof error.maxEntries === 'number' ? { maxEntries: error.maxEntries } : {}),
    };
  }
  return { code: 'host_error', message: 'the ctx call failed' };
}

function ctxError(code, message) {
  return Object.assign(new Error(message), { code });
}

function stringArg(value) {
  if (typeof value !== 'string') throw ctxError('invalid_argument', 'expected a string argument');
  return value;
}
