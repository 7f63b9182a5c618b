// Evaluated as an ES module inside each fresh isolated-vm context, before the
// tool's module. Its default export receives one host function (`hostStart`, an
// isolated-vm Callback that only ever exchanges copies) and builds, per call,
// the `ctx` the tool sees. Nothing from here is put on globalThis: the host
// function lives in this closure only, so tool code can never reach it except
// through ctx's own methods. No imports: this file runs where nothing exists.

/**
 * @param {(id: number, op: string, args: unknown[]) => void} hostStart
 * @param {{ maxPendingHostCalls: number, maxOutputChars: number, maxMessageChars: number, maxEvents: number, maxEventChars?: number, maxPathChars?: number }} options
 */
export default function createToolRuntime(hostStart, options) {
  'use strict';
  // Captured before tool code runs in this context, so a tool that replaces
  // these globals only changes its own behaviour, never how its result is read.
  const stringify = JSON.stringify;
  const parseJson = JSON.parse;
  const freeze = Object.freeze;
  const ErrorCtor = Error;
  const PromiseCtor = Promise;
  const isFiniteNumber = Number.isFinite;
  const entriesOf = Object.entries;
  const RangeErrorCtor = RangeError;
  const WeakMapCtor = WeakMap;
  const isArray = Array.isArray;
  const createObject = Object.create;
  const hasOwn = Object.hasOwn;
  const pending = new Map();
  /** An envelope's fields (runOnce's), hostCalls apart. */
  const ENVELOPE_KEYS = ['ok', 'json', 'code', 'name', 'errorCode', 'reason', 'message', 'path'];
  let nextId = 1;
  // Each event is a hop to the host thread: a flood is cut off here, before it leaves.
  let eventsLeft = options.maxEvents;
  // Messages handed to hostStart so far: a call's answer waits until the host has them all.
  let hostCalls = 0;
  function notifyHost(op, args) {
    if (eventsLeft <= 0) return;
    eventsLeft -= 1;
    hostStart(0, op, args);
    hostCalls += 1;
  }

  function makeError(code, message) {
    const error = /** @type {Error & { code?: string }} */ (new ErrorCtor(message));
    error.code = code;
    return error;
  }

  function callHost(op, args) {
    return new PromiseCtor((resolve, reject) => {
      if (pending.size >= options.maxPendingHostCalls) {
        reject(makeError('too_many_pending', `at most ${options.maxPendingHostCalls} ctx calls may be pending`));
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve, reject });
      try {
        hostStart(id, op, args);
        hostCalls += 1;
      } catch {
        pending.delete(id);
        reject(makeError('invalid_argument', `${op}: arguments must be plain data`));
      }
    });
  }

  /** Called by the host (never by tool code) with the copied answer to one ctx call. */
  function settle(id, ok, value) {
    const entry = pending.get(id);
    if (entry === undefined) return;
    pending.delete(id);
    if (ok) {
      entry.resolve(value);
    } else {
      const failure = typeof value === 'object' && value !== null ? value : {};
      const error = makeError(String(failure.code ?? 'host_error'), String(failure.message ?? 'the ctx call failed'));
      for (const key of ['maxBytes', 'maxEntries', 'reason']) {
        if (failure[key] !== undefined) error[key] = failure[key];
      }
      entry.reject(error);
    }
  }

  function requireString(op, name, value) {
    if (typeof value !== 'string') throw makeError('invalid_argument', `${op}: ${name} must be a string`);
    return value;
  }

  // A message is cut here, before it is copied out of the isolate: 150 messages of
  // 2 MiB each would otherwise pile up in the isolate process's own heap.
  function eventText(message) {
    const text = String(message);
    return options.maxEventChars === undefined ? text : text.slice(0, options.maxEventChars);
  }

  // No file system takes a path this long (Linux: 4096 bytes); refused before it crosses.
  function requirePath(op, value) {
    const path = requireString(op, 'path', value);
    if (options.maxPathChars !== undefined && path.length > options.maxPathChars) {
      throw makeError('invalid_argument', `${op}: the path is longer than ${options.maxPathChars} characters`);
    }
    return path;
  }

  function wrapResponse(data) {
    const body = String(data.body);
    return freeze({
      status: data.status,
      statusText: data.statusText,
      ok: data.status >= 200 && data.status < 300,
      url: data.url,
      headers: freeze({ ...data.headers }),
      text: async () => body,
      json: async () => parseJson(body),
    });
  }

  function plainInit(init) {
    if (init === undefined || init === null) return {};
    if (typeof init !== 'object') throw makeError('invalid_argument', 'fetch: init must be an object');
    const plain = {};
    if (init.method !== undefined) plain.method = String(init.method);
    if (init.body !== undefined && init.body !== null) plain.body = requireString('fetch', 'body', init.body);
    if (init.headers !== undefined && init.headers !== null) {
      const headers = {};
      for (const [name, value] of entriesOf(init.headers)) headers[String(name)] = String(value);
      plain.headers = headers;
    }
    return plain;
  }

  // ctx.output (SPEC 5.1): plain data envelopes, built here and checked by the
  // host like any result. Nothing is validated on this side: the host refuses.
  const output = freeze({
    rich: (parts) => ({ 'toolhost/output': { kind: 'rich', parts } }),
    modelError: (parts) => ({ 'toolhost/output': { kind: 'model_error', parts } }),
    hostOnly: (value, modelParts) => ({
      'toolhost/output': modelParts === undefined ? { kind: 'host_only', hostOnly: value } : { kind: 'host_only', hostOnly: value, parts: modelParts },
    }),
  });

  function buildCtx(callId) {
    const fs = freeze({
      readText: async (path) => callHost('fs.readText', [requirePath('readText', path)]),
      writeText: async (path, text) => callHost('fs.writeText', [requirePath('writeText', path), requireString('writeText', 'text', text)]),
      list: async (path = '.') => callHost('fs.list', [requirePath('list', path)]),
      stat: async (path) => callHost('fs.stat', [requirePath('stat', path)]),
    });
    return freeze({
      callId,
      output,
      fs,
      fetch: async (url, init) => wrapResponse(await callHost('fetch', [String(url), plainInit(init)])),
      progress(done, total, message) {
        if (!isFiniteNumber(done)) return;
        notifyHost('progress', [done, isFiniteNumber(total) ? total : null, message === undefined ? null : eventText(message)]);
      },
      log(level, message) {
        notifyHost('log', [String(level).slice(0, 16), eventText(message)]);
      },
    });
  }

  function describeThrown(thrown) {
    try {
      if (typeof thrown === 'object' && thrown !== null) {
        const message = typeof thrown.message === 'string' ? thrown.message : String(thrown);
        return {
          message: message.slice(0, options.maxMessageChars),
          name: typeof thrown.name === 'string' ? thrown.name.slice(0, 64) : undefined,
          errorCode: typeof thrown.code === 'string' ? thrown.code.slice(0, 64) : undefined,
        };
      }
      return { message: String(thrown).slice(0, options.maxMessageChars) };
    } catch {
      return { message: 'the tool threw a value that cannot be described' };
    }
  }

  // JSON as JSON.stringify writes it for an object property that is undefined
  // (left out); anything else that is not JSON (a function, a symbol, a BigInt, a
  // non-finite number, undefined in an array or as the result) is refused with
  // where it is, rather than silently dropped or turned into null.
  function serialize(value) {
    let reason;
    let path;
    const paths = new WeakMapCtor();
    /** @this {object} the object or array that holds `item` */
    const replacer = function (key, item) {
      const here = key === '' && paths.get(this) === undefined ? '' : `${paths.get(this) ?? ''}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
      const type = typeof item;
      if (type === 'undefined' && key !== '' && !isArray(this)) return undefined;
      if (type === 'bigint' || type === 'function' || type === 'symbol' || type === 'undefined') reason = type;
      else if (type === 'number' && !isFiniteNumber(item)) reason = 'non_finite_number';
      if (reason !== undefined) {
        path = here === '' ? '/' : here;
        throw makeError('invalid_output', reason);
      }
      if (type === 'object' && item !== null) paths.set(item, here);
      return item;
    };
    try {
      return { json: stringify(value, replacer) };
    } catch (error) {
      if (reason !== undefined) return { reason, path };
      return { reason: error instanceof RangeErrorCtor ? 'too_deep' : 'not_serializable' };
    }
  }

  /**
   * Runs the tool's default export once; returns a plain envelope, never throws. Its
   * `hostCalls` counts what the context handed hostStart by then: a run that ended within
   * one synchronous step of the host's reaches it before those messages do.
   */
  async function run(namespace, args, callId) {
    return plainEnvelope(await runOnce(namespace, args, callId), hostCalls);
  }

  // The envelope that leaves the isolate: its fields read here, within the step's timeout, only
  // strings, numbers and booleans kept, on an object without a prototype (so no `then` of the
  // tool's makes it a thenable). isolated-vm copies a result out after the step's timeout, where
  // a getter of the tool's would run unbounded, and a tool can swap what an await hands back (a
  // `then` on Object.prototype, a replaced Promise.prototype.then): what is not an envelope
  // any more is the tool's failure.
  function plainEnvelope(envelope, calls) {
    let plain = createObject(null);
    if (typeof envelope === 'object' && envelope !== null) {
      for (let i = 0; i < ENVELOPE_KEYS.length; i++) {
        const key = /** @type {string} */ (ENVELOPE_KEYS[i]);
        const field = hasOwn(envelope, key) ? envelope[key] : undefined;
        if (typeof field === 'string' || typeof field === 'number' || typeof field === 'boolean') plain[key] = field;
      }
    }
    if (!((plain.ok === true && typeof plain.json === 'string') || (plain.ok === false && typeof plain.code === 'string'))) {
      plain = createObject(null);
      plain.ok = false;
      plain.code = 'tool_error';
      plain.message = 'the tool interfered with how its result is read';
    }
    plain.hostCalls = typeof calls === 'number' ? calls : 0;
    return plain;
  }

  async function runOnce(namespace, args, callId) {
    const tool = namespace.default;
    if (typeof tool !== 'function') {
      return { ok: false, code: 'tool_error', message: 'the tool module has no default export function' };
    }
    let result;
    try {
      result = await tool(args, buildCtx(callId));
    } catch (thrown) {
      const described = describeThrown(thrown);
      return { ok: false, code: 'tool_error', ...described };
    }
    const { json, reason, path } = serialize(result);
    if (json === undefined) {
      return { ok: false, code: 'invalid_output', message: 'the tool returned a value that is not JSON', reason, ...(path !== undefined ? { path } : {}) };
    }
    // UTF-16 length never exceeds UTF-8 bytes, so this only refuses what is surely too big.
    if (json.length > options.maxOutputChars) {
      return { ok: false, code: 'output_limit', message: 'the tool result exceeds the output limit' };
    }
    return { ok: true, json };
  }

  return freeze({ run, settle });
}
