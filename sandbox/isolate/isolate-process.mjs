// The isolate process: a Node process of the host's, started inside the
// namespace sandbox (only the tool's roots, its manifest folder and the code
// that runs here are visible; no network), that holds isolated-vm, the prelude
// and the prepared contexts of one isolate tool. A V8 or isolated-vm failure, a
// catastrophic out-of-memory or an abort ends this process and fails its calls;
// the host lives on. ctx.fs runs here, so paths resolve where only the declared
// roots exist; ctx.fetch runs here too, out through the egress proxy of the
// tool's grant (the only way out of this network namespace; each request names
// its call's token), so what a fetch brings back (head, body, time) is bounded
// here and never crosses to the host. Everything sent to the host is cut to the
// bounds of ISOLATE_WIRE_LIMITS (sandbox/shared/limits.mjs) first.
//
// Channel: frames (sandbox/shared/frames.mjs) on stdin (host → here) and stdout
// (here → host); stderr carries diagnostics only. Message shapes: sandbox/shared/messages.d.mts.
import { readFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { encodeFrame, FrameReader } from '../shared/frames.mjs';
import { ISOLATE_WIRE_LIMITS } from '../shared/limits.mjs';
import { readHostToIsolateMessage, readLogLevel } from '../shared/readers.mjs';
import { IsolateSlot, toPreludeClosure } from './isolate-slot.mjs';
import { createScopedFs } from '../ctx/scoped-fs.mjs';
import { createCallConnectionLimiter, createConnectionLimiter } from '../ctx/egress-client.mjs';
import { createScopedFetch } from '../ctx/scoped-fetch.mjs';

/** @typedef {import('../shared/messages.mjs').IsolateInitMessage} IsolateInitMessage */
/** @typedef {import('../shared/messages.mjs').IsolateRunMessage} IsolateRunMessage */
/** @typedef {import('../shared/messages.mjs').IsolateToHostMessage} IsolateToHostMessage */

/** The host is trusted: its frames (arguments, fetch bodies) may be large, never unbounded. */
const MAX_INBOUND_FRAME_BYTES = 64 * 1024 * 1024;
const MAX_PENDING_CTX_CALLS = 32;
/** Linux's PATH_MAX: no longer path names a file; refused before any work on it. */
const MAX_PATH_CHARS = 4096;
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
 * Isolates kept warm for calls one after another: each call goes to one whose
 * refill is done, so the fresh context the last call's isolate is making (about
 * half a millisecond of V8 work on that isolate's thread) is made beside the
 * next call instead of in front of it. Each still has the tool's heap limit.
 */
const WARM_SLOTS = 2;

/** @type {IsolateInitMessage | undefined} */
let config;
/** @type {any} */
let ivm;
/** @type {import('./isolate-slot.mjs').SlotSources | undefined} */
let sources;
/** Slots waiting for a call, warm. */
const idleSlots = [];
let slotCount = 0;
/** Calls waiting for a slot (all isolates busy). */
const queue = [];
/** @type {Map<number, Call>} */
const calls = new Map();
/** @type {((signal?: AbortSignal) => Promise<() => void>) | undefined} */
let acquireConnection;

/**
 * @typedef {{ id: number, callId: string, timeoutMs: number, startedMs: number, stopped: boolean,
 *   slot: IsolateSlot | undefined, events: number, eventBytes: number, denials: number, attempts: number, pending: number,
 *   egressToken: string | undefined, aborter: AbortController | undefined,
 *   fetch: ReturnType<typeof createScopedFetch> | undefined,
 *   fs: ReturnType<typeof createScopedFs> | undefined }} Call
 */

const reader = new FrameReader({
  maxFrameBytes: MAX_INBOUND_FRAME_BYTES,
  maxHeaderBytes: MAX_INBOUND_FRAME_BYTES,
  onFrame: (header) => onHostMessage(header),
  onError: (reason) => die(`unreadable frame from the host: ${reason}`, 65),
});
process.stdin.on('data', (chunk) => reader.push(chunk));
// The host is gone (or closed us): nothing here may outlive it.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdout.on('error', () => process.exit(0));

/** @param {IsolateToHostMessage} message @param {string | Uint8Array} [body] */
function send(message, body) {
  process.stdout.write(encodeFrame(message, body));
}

/** The file's text, or undefined after reporting `what` (with the error's code, never the path) and ending. */
function readOrFail(file, what) {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    failStart(what, error);
    return undefined;
  }
}

/** Tells the host why this process cannot start (bounded, no file names: the caller may read it), then ends. */
function failStart(what, error) {
  const code = typeof error?.code === 'string' && /^[A-Z][A-Z0-9_]{0,31}$/.test(error.code) ? ` (${error.code})` : '';
  try {
    writeSync(1, encodeFrame({ type: 'start_failed', reason: cut(`${what}${code}`, 200) }));
  } finally {
    process.exit(70);
  }
}

function die(why, code) {
  try {
    process.stderr.write(`isolate process: ${why}\n`);
  } finally {
    process.exit(code);
  }
}

function onHostMessage(header) {
  const message = readHostToIsolateMessage(header);
  switch (message.type) {
    case 'init':
      init(message);
      return;
    case 'run':
      void startCall(message);
      return;
    case 'stop':
      stopCall(message.id);
      return;
    case 'violation':
      die(`the host broke the protocol: ${message.reason}`, 65);
  }
}

/**
 * Starts: loads what runs here, prepares the first context (our code only: the
 * prelude, the module compiled and linked) and says `loaded`; then runs the tool
 * module's top level ahead (EVALUATE_AHEAD_TIMEOUT_MS at most) and says `ready`.
 * A process that ends between the two was ended by that top level (its heap),
 * which the host reports as the tool's failure, not as a sandbox that cannot
 * start. What cannot be read or loaded is reported (`start_failed`) and ends it.
 * @param {IsolateInitMessage} message
 */
function init(message) {
  if (config !== undefined) return;
  config = message;
  // The process's bound stays under the proxy's own (16 at once per process), with room for connections still closing.
  if (message.egress !== undefined) acquireConnection = createConnectionLimiter(MAX_PROXY_CONNECTIONS_PER_CALL * Math.max(1, Number(message.maxIsolates) || 1));
  const preludeSource = readOrFail(message.preludePath, 'the isolate prelude cannot be read');
  const toolSource = readOrFail(message.entryPath, "the tool's entry file cannot be read");
  if (preludeSource === undefined || toolSource === undefined) return;
  try {
    ivm = createRequire(import.meta.url)(message.ivmPath);
  } catch (error) {
    failStart('isolated-vm cannot be loaded', error);
    return;
  }
  sources = {
    toolName: message.toolName,
    preludeClosure: toPreludeClosure(preludeSource),
    toolSource,
    memoryMb: message.memoryMb,
    runtimeOptions: {
      maxPendingHostCalls: MAX_PENDING_CTX_CALLS,
      // A bound in characters from the byte cap: UTF-16 length never exceeds UTF-8 bytes, so the
      // prelude refuses only what is surely past the cap; finishEnvelope counts the bytes.
      maxOutputChars: message.floodCapBytes,
      maxMessageChars: ISOLATE_WIRE_LIMITS.maxIvmMessageChars,
      maxEvents: ISOLATE_WIRE_LIMITS.maxEventsPerCall,
      maxEventChars: ISOLATE_WIRE_LIMITS.maxMessageChars,
      maxPathChars: MAX_PATH_CHARS,
    },
  };
  const slot = newSlot();
  idleSlots.push(slot);
  try {
    // A fresh isolate runs no tool code yet: its first context is prepared synchronously here.
    slot.spares.push(slot.prepareNow());
  } catch (error) {
    failStart('the first isolate context cannot be prepared', error);
    return;
  }
  send({ type: 'loaded' });
  // Ready once the first contexts are prepared and the top level ran ahead: the first call finds one warm.
  slot.refill();
  void slot.whenRefilled().finally(() => {
    send({ type: 'ready' });
    while (slotCount < Math.min(WARM_SLOTS, message.maxIsolates)) {
      const warm = newSlot();
      idleSlots.unshift(warm);
      warm.refill();
    }
  });
}

function newSlot() {
  slotCount += 1;
  const slot = new IsolateSlot(ivm, /** @type {any} */ (sources), (message) => {
    // Nothing in this process is sound any more: report (synchronously, naming the call
    // whose isolate it was) and end at once; process.exit could wait on the broken isolate.
    try {
      const culprit = [...calls.values()].find((call) => call.slot === slot);
      writeSync(1, encodeFrame({ type: 'catastrophe', message: cut(message, ISOLATE_WIRE_LIMITS.maxIvmMessageChars), ...(culprit !== undefined ? { id: culprit.id } : {}) }));
    } finally {
      process.kill(process.pid, 'SIGKILL');
    }
  });
  return slot;
}

function dropSlot(slot, reason) {
  slot.dispose(reason);
  slotCount -= 1;
}

function acquireSlot() {
  if (idleSlots.length > 0) {
    // The one whose refill is done, else the one released last.
    let at = idleSlots.length - 1;
    for (let index = at; index >= 0; index -= 1) {
      if (idleSlots[index].isReady) {
        at = index;
        break;
      }
    }
    return Promise.resolve(idleSlots.splice(at, 1)[0]);
  }
  if (slotCount < (config?.maxIsolates ?? 1)) return Promise.resolve(newSlot());
  return new Promise((resolve) => queue.push(resolve));
}

function releaseSlot(slot) {
  slot.busy = false;
  if (!slot.isUsable) {
    slotCount -= 1;
    slot.dispose('retired');
  } else {
    const waiting = queue.shift();
    if (waiting !== undefined) {
      slot.busy = true;
      waiting(slot);
      return;
    }
    idleSlots.push(slot);
    slot.refill();
  }
  // A freed place serves the next queued call with a new isolate.
  while (queue.length > 0 && slotCount < (config?.maxIsolates ?? 1)) {
    const fresh = newSlot();
    fresh.busy = true;
    /** @type {Function} */ (queue.shift())(fresh);
  }
}

/** @param {IsolateRunMessage} message */
async function startCall(message) {
  if (config === undefined || typeof message.id !== 'number' || calls.has(message.id)) return;
  /** @type {Call} */
  const call = {
    id: message.id,
    callId: String(message.callId),
    timeoutMs: Math.max(1, Math.ceil(Number(message.timeoutMs) || 1)),
    startedMs: performance.now(),
    stopped: false,
    slot: undefined,
    events: 0,
    eventBytes: 0,
    denials: 0,
    attempts: 0,
    pending: 0,
    egressToken: typeof message.egressToken === 'string' ? message.egressToken : undefined,
    // Made with the call's first fetch: most calls never fetch, and an abort builds a DOMException.
    aborter: undefined,
    fetch: undefined,
    fs: undefined,
  };
  calls.set(call.id, call);
  const slot = await acquireSlot();
  slot.busy = true;
  if (call.stopped) {
    releaseSlot(slot);
    return;
  }
  call.slot = slot;
  let prepared;
  try {
    try {
      prepared = await slot.take();
    } catch (error) {
      finishCall(call, ivmFailure(call, error, slot, 'prepare'));
      return;
    }
    if (call.stopped) return;
    if ('loadError' in prepared.tool) {
      finishCall(call, { type: 'result', id: call.id, kind: 'load_error', message: cut(prepared.tool.loadError, ISOLATE_WIRE_LIMITS.maxIvmMessageChars) });
      return;
    }
    prepared.binding.dispatch = (id, op, args) => dispatch(call, prepared, id, op, args);
    const { module } = prepared.tool;
    // Evaluated ahead (IsolateSlot.evaluateAhead), or now within the call's deadline.
    const evaluated = prepared.evaluated ?? (await evaluateNow(module, call));
    if (!evaluated.ok) {
      finishCall(call, ivmFailure(call, evaluated.error, slot, 'evaluate'));
      return;
    }
    let envelope;
    try {
      envelope = await prepared.runtime.apply(undefined, ['run', module.namespace.derefInto(), new ivm.ExternalCopy(message.args).copyInto({ release: true }), call.callId], {
        timeout: remainingMs(call),
        result: { copy: true, promise: true },
      });
    } catch (error) {
      finishCall(call, ivmFailure(call, error, slot, 'run'));
      return;
    }
    finishEnvelope(call, envelope);
  } finally {
    prepared?.release();
    void afterCall(call, slot);
  }
}

async function evaluateNow(module, call) {
  try {
    await module.evaluate({ timeout: remainingMs(call) });
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Sends a successful or failed envelope, its JSON as the body, bounded in UTF-8 bytes here. */
function finishEnvelope(call, envelope) {
  if (typeof envelope !== 'object' || envelope === null) {
    finishCall(call, { type: 'result', id: call.id, kind: 'envelope', envelope: {} });
    return;
  }
  if (envelope.ok === true && typeof envelope.json === 'string') {
    const bytes = Buffer.byteLength(envelope.json, 'utf8');
    if (bytes > /** @type {IsolateInitMessage} */ (config).floodCapBytes) {
      finishCall(call, { type: 'result', id: call.id, kind: 'envelope', envelope: { ok: false, code: 'output_limit' } });
      return;
    }
    finishCall(call, { type: 'result', id: call.id, kind: 'envelope', envelope: { ok: true, bodyBytes: bytes } }, envelope.json);
    return;
  }
  const plain = {};
  for (const key of ['code', 'name', 'errorCode', 'reason']) {
    if (typeof envelope[key] === 'string') plain[key] = cut(envelope[key], 64);
  }
  // Where in the result a value is not JSON: a pointer of the tool's own keys, bounded.
  if (typeof envelope.path === 'string') plain.path = cut(envelope.path, 256);
  if (typeof envelope.message === 'string') plain.message = cut(envelope.message, ISOLATE_WIRE_LIMITS.maxIvmMessageChars);
  finishCall(call, { type: 'result', id: call.id, kind: 'envelope', envelope: { ok: false, ...plain } });
}

function finishCall(call, message, body) {
  if (!calls.has(call.id)) return;
  calls.delete(call.id);
  if (!call.stopped) send(message, body);
}

async function afterCall(call, slot) {
  calls.delete(call.id);
  // The call's fetches in flight end with it (the host closes its token at the proxy too).
  call.aborter?.abort();
  if (call.stopped || !slot.isUsable) {
    dropSlot(slot, 'retired');
    slot.busy = false;
    releaseQueued();
    return;
  }
  if (await slot.isCrowdedByGarbage().catch(() => true)) {
    dropSlot(slot, 'retired');
    slot.busy = false;
    releaseQueued();
    return;
  }
  releaseSlot(slot);
}

function releaseQueued() {
  while (queue.length > 0 && slotCount < (config?.maxIsolates ?? 1)) {
    const fresh = newSlot();
    fresh.busy = true;
    /** @type {Function} */ (queue.shift())(fresh);
  }
  if (idleSlots.length === 0 && slotCount < (config?.maxIsolates ?? 1)) {
    const spare = newSlot();
    idleSlots.push(spare);
    spare.refill();
  }
}

/** The host gave up on the call: its isolate goes (a loop or a pending promise may still hold it). */
function stopCall(id) {
  const call = calls.get(id);
  if (call !== undefined) {
    call.stopped = true;
    calls.delete(id);
    call.slot?.dispose('retired');
    call.aborter?.abort();
  }
  send({ type: 'stopped', id });
}

function remainingMs(call) {
  return Math.max(1, Math.ceil(call.timeoutMs - (performance.now() - call.startedMs)));
}

/** isolated-vm's failure as bounded facts; the host maps them to codes (isolate-errors.ts). */
function ivmFailure(call, error, slot, stage) {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  return {
    type: 'result',
    id: call.id,
    kind: 'ivm_error',
    stage,
    message: cut(message, ISOLATE_WIRE_LIMITS.maxIvmMessageChars),
    isolateDisposed: slot.isolate.isDisposed,
    ...(slot.hostDisposeReason !== undefined ? { hostDisposeReason: slot.hostDisposeReason } : {}),
  };
}

// --- ctx calls of one call ---------------------------------------------------

function dispatch(call, prepared, id, op, args) {
  if (call.stopped || !calls.has(call.id) || typeof op !== 'string' || !Array.isArray(args)) return;
  if (id === 0) {
    notify(call, op, args);
    return;
  }
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return;
  const settle = (ok, value) => {
    if (call.stopped || !calls.has(call.id)) return;
    prepared.runtime.apply(undefined, ['settle', id, ok, new ivm.ExternalCopy(value).copyInto({ release: true })], { timeout: remainingMs(call) }).catch(() => {
      // The context is gone, or the continuation ran past the deadline: the host stops the call.
    });
  };
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
  const { roots, protectedPaths, hiddenPaths } = /** @type {IsolateInitMessage} */ (config);
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

/** Whether `call` still runs: a refusal settled after its call answered is not sent (the host drops it anyway). */
function isRunning(call) {
  return !call.stopped && calls.get(call.id) === call;
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

/** Counts one event against the call's budgets; false when it must be dropped. */
function chargeEvent(call, text) {
  const bytes = text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  if (call.events >= ISOLATE_WIRE_LIMITS.maxEventsPerCall || call.eventBytes + bytes > ISOLATE_WIRE_LIMITS.maxEventBytesPerCall) return false;
  call.events += 1;
  call.eventBytes += bytes;
  return true;
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
  const egress = /** @type {IsolateInitMessage} */ (config).egress;
  const sideEffect = /** @type {IsolateInitMessage} */ (config).sideEffect;
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

function cut(text, maxChars) {
  return text.length > maxChars ? text.slice(0, maxChars) : text;
}
