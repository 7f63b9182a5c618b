// The Piscina worker file for `mode: worker` tools. It imports the tool module
// (once per path), builds the same ctx an isolate tool gets plus ctx.signal,
// runs the tool and answers with a plain envelope: no Error object crosses the
// thread boundary. Progress, log and denial events go out, and the host's
// abort comes in, on the pool's BroadcastChannel (named in the pool's
// workerData, one per thread, messages tagged with the callId). Never a
// MessagePort per call: a port transferred per call grew both threads' memory
// without bound (about 6 KB a call, until the worker hit its heap limit); a
// lane's one port lives as long as its thread. What is the same for every call
// of the pool (the entry, roots, paths, network allow list, limits) comes once,
// in workerData; a call carries only its id, the arguments and its start gate.
//
// Each thread serves one lane: a Piscina task that lasts while the host keeps
// it open, with a MessagePort the thread's calls and answers travel on. The
// host hands a thread several calls at once, but the thread runs them one
// at a time, in order: a call begins only if it wins its gate (the host may
// have withdrawn it), and when it ends the thread begins nothing more if the
// host marked it as being ended (src/runner/worker/call-gates.ts): ending a
// thread to stop one call never stops another.
import { pathToFileURL } from 'node:url';
import { BroadcastChannel, threadId, workerData } from 'node:worker_threads';
import { createScopedFs } from '../ctx/scoped-fs.mjs';
import { createScopedFetch } from '../ctx/scoped-fetch.mjs';
import { threadGate } from './worker-gate.mjs';
import { serializeResult } from './result-json.mjs';
import { EVENT_LIMITS } from '../shared/limits.mjs';
import { readLogLevel, readWorkerAbort, readWorkerTasks } from '../shared/readers.mjs';

// Generous: the host redacts the message, then cuts it to what the caller sees.
const MAX_MESSAGE_CHARS = 8192;

/** Tool modules by entry path: imported once per worker thread. */
const tools = new Map();
/** This thread's end of each pool channel, by name, and the abort of each call running here. */
const channels = new Map();
const runningCalls = new Map();

function channelNamed(name) {
  let channel = channels.get(name);
  if (channel === undefined) {
    channel = new BroadcastChannel(name);
    channel.onmessage = (event) => {
      const message = readWorkerAbort(event.data);
      if (message !== undefined) runningCalls.get(message.callId)?.abort();
    };
    // An idle pool thread must not be kept alive by its channel.
    channel.unref();
    channels.set(name, channel);
  }
  return channel;
}

/** @typedef {import('../shared/messages.mjs').WorkerPoolData} WorkerPoolData */
/** @typedef {import('../shared/messages.mjs').WorkerTask} WorkerTask */
/** @typedef {import('../shared/messages.mjs').WorkerEventMessage} WorkerEventMessage */
/** @typedef {WorkerEventMessage extends infer M ? M extends unknown ? Omit<M, 'callId'> : never : never} WorkerEvent */

/** The pool's calls have this in common (worker-runner.ts builds it once). */
const pool = /** @type {WorkerPoolData} */ (workerData);
const gate = threadGate(pool.gates, pool.gateMarks, threadId);
/** @type {import('../shared/messages.mjs').WorkerWithdrawnAnswer} */
const WITHDRAWN = Object.freeze({ withdrawn: true });

/** Calls handed to this thread, not yet begun, in the order they came. */
const waiting = [];
let draining = false;
/** Set once the host is ending this thread: nothing more begins here. */
let ending = false;

/**
 * Piscina's handler: one task per thread for as long as the host keeps this
 * thread's lane open (src/runner/worker/worker-lane.ts). The host posts the
 * thread's calls on `port` (those of one turn in one message) and each answer
 * goes back on it at once, tagged with the call's gate: no Piscina task,
 * promise and wake-up per call. Answers are never held back to be sent
 * together: the next call may never end (a busy loop), and an answer held
 * behind it would be lost with the thread. The task ends
 * when the host closes the port (the lane idle, or the pool closing).
 * @param {{ port: import('node:worker_threads').MessagePort }} lane
 */
export function serve({ port }) {
  return new Promise((resolve) => {
    // The calls the host handed in one turn come together (src/runner/worker/worker-lane.ts).
    port.on('message', (/** @type {unknown} */ value) => {
      const tasks = readWorkerTasks(value);
      // Not tasks: nothing to begin (the host's calls end by their own deadline).
      if (!Array.isArray(tasks)) return;
      for (const task of tasks) waiting.push(task);
      if (!draining) void drain(port);
    });
    port.once('close', () => resolve(undefined));
  });
}

/** @param {import('node:worker_threads').MessagePort} port */
async function drain(port) {
  draining = true;
  while (waiting.length > 0 && !ending) {
    const task = waiting.shift();
    if (!gate.begin(task)) {
      answerOn(port, task, WITHDRAWN, false);
      continue;
    }
    let answer;
    let failed = false;
    try {
      answer = await runTask(task);
    } catch {
      // Not expected (runTask answers every tool failure): the host reports the thread as failing the call.
      failed = true;
    }
    // The host marks the gate `killing` instead when it is ending this thread for this call.
    if (!gate.end(task)) ending = true;
    answerOn(port, task, answer, failed);
  }
  draining = false;
}

/**
 * @param {import('node:worker_threads').MessagePort} port
 * @param {WorkerTask} task
 * @param {unknown} answer
 * @param {boolean} failed
 */
function answerOn(port, task, answer, failed) {
  try {
    port.postMessage(
      /** @type {import('../shared/messages.mjs').WorkerLaneAnswer} */ (
        failed ? { slot: task.slot, ticket: task.ticket, failed: true } : { slot: task.slot, ticket: task.ticket, answer }
      ),
    );
  } catch {
    // The lane is closed (the host let go of it): nobody waits for this answer.
  }
}

/**
 * Runs one call. The answer counts the events posted for it (`events`): the
 * host waits for that many before it answers, so none is lost (they travel on
 * the channel, the answer on Piscina's port, and either may arrive first).
 * @param {WorkerTask} task
 */
async function runTask(task) {
  const channel = channelNamed(pool.eventChannel);
  const abort = new CallAbort();
  runningCalls.set(task.callId, abort);
  let events = 0;
  const post = (/** @type {WorkerEvent} */ message) => {
    try {
      channel.postMessage(/** @type {WorkerEventMessage} */ ({ ...message, callId: task.callId }));
      events++;
    } catch {
      // The host side is gone; the call has ended.
    }
  };
  const answer = (envelope) => ({ ...envelope, events });
  try {
    // Imported once per thread: a cached tool costs no await.
    let tool = tools.get(pool.entryPath);
    try {
      tool ??= await loadTool(pool.entryPath);
    } catch (error) {
      return answer({ ok: false, code: 'tool_error', message: `the tool module failed to load: ${describe(error).message}`, reason: 'load_failed' });
    }
    if (typeof tool !== 'function') {
      return answer({ ok: false, code: 'tool_error', message: 'the tool module has no default export function', reason: 'load_failed' });
    }
    const ctx = new ToolContext(task.callId, abort, post);
    let result;
    try {
      result = await tool(task.args, ctx);
    } catch (error) {
      return answer({ ok: false, code: 'tool_error', ...describe(error) });
    }
    const { json, reason, path } = serializeResult(result);
    if (json === undefined)
      return answer({ ok: false, code: 'invalid_output', message: 'the tool returned a value that is not JSON', reason, ...(path !== undefined ? { path } : {}) });
    // A UTF-16 code unit is at most 3 UTF-8 bytes: a short result needs no count.
    if (json.length * 3 > pool.floodCapBytes && Buffer.byteLength(json, 'utf8') > pool.floodCapBytes) {
      return answer({ ok: false, code: 'output_limit', message: 'the tool result exceeds the output limit' });
    }
    return { ok: true, json, events };
  } finally {
    runningCalls.delete(task.callId);
    abort.abort();
  }
}

async function loadTool(entryPath) {
  const module = await import(pathToFileURL(entryPath).href);
  const tool = module.default;
  tools.set(entryPath, tool);
  return tool;
}

// ctx.output (SPEC 5.1): plain data envelopes, the same the isolate prelude
// builds; the host checks them like any result.
const output = Object.freeze({
  rich: (parts) => ({ 'toolhost/output': { kind: 'rich', parts } }),
  modelError: (parts) => ({ 'toolhost/output': { kind: 'model_error', parts } }),
  hostOnly: (value, modelParts) => ({
    'toolhost/output': modelParts === undefined ? { kind: 'host_only', hostOnly: value } : { kind: 'host_only', hostOnly: value, parts: modelParts },
  }),
});

/**
 * A call's abort: ctx.signal, made on first use (most tools never read it), already
 * aborted if the call was stopped or ended before. Aborted when the host says stop
 * and when the call ends, so a tool's leftover work learns it is over.
 */
class CallAbort {
  #controller;
  #aborted = false;

  get signal() {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  abort() {
    this.#aborted = true;
    this.#controller?.abort();
  }
}

/**
 * A call's ctx. Its getters (signal, fs) live on the class, not on each ctx: an
 * object literal with getters defined them afresh on every call, one runtime call
 * each, a measurable part of a short call's time on the thread (and of its latency).
 * ctx.fs and ctx.fetch are built on a call's first use of them: an echo call builds
 * neither. The functions a tool may take off the ctx (fetch, progress, log) are its
 * own and need no `this`, as before.
 */
class ToolContext {
  #abort;
  #onDenied;
  #fs;
  #fsFacade;
  #scopedFetch;

  /**
   * @param {string} callId
   * @param {CallAbort} abort
   * @param {(message: WorkerEvent) => void} post
   */
  constructor(callId, abort, post) {
    this.#abort = abort;
    this.#onDenied = (denial) => post({ type: 'denied', denial });
    this.callId = callId;
    this.output = output;
    this.fetch = async (url, init) => wrapResponse(await this.#fetchOf()(String(url), init));
    this.progress = (done, total, message) => {
      if (!Number.isFinite(done)) return;
      post({
        type: 'progress',
        progress: done,
        ...(Number.isFinite(total) ? { total } : {}),
        ...(message === undefined ? {} : { message: String(message).slice(0, EVENT_LIMITS.maxMessageChars) }),
      });
    };
    this.log = (level, message) => {
      post({ type: 'log', level: readLogLevel(level), message: String(message).slice(0, EVENT_LIMITS.maxMessageChars) });
    };
    Object.freeze(this);
  }

  get signal() {
    return this.#abort.signal;
  }

  // Built on first use too (and the same object after).
  get fs() {
    return (this.#fsFacade ??= Object.freeze({
      readText: (path) => this.#fsOf().readText(path),
      writeText: (path, text) => this.#fsOf().writeText(path, text),
      list: (path = '.') => this.#fsOf().list(path),
      stat: (path) => this.#fsOf().stat(path),
    }));
  }

  #fsOf() {
    return (this.#fs ??= createScopedFs({ roots: pool.roots, protectedPaths: pool.protectedPaths ?? [], hiddenPaths: pool.hiddenPaths ?? [], onDenied: this.#onDenied }));
  }

  #fetchOf() {
    return (this.#scopedFetch ??= createScopedFetch({ allow: pool.networkAllow, sideEffect: pool.sideEffect, onDenied: this.#onDenied, signal: this.#abort.signal }));
  }
}
// A tool cannot change what every later ctx of the thread inherits.
Object.freeze(ToolContext.prototype);

function wrapResponse(data) {
  const { body } = data;
  return Object.freeze({
    status: data.status,
    statusText: data.statusText,
    ok: data.status >= 200 && data.status < 300,
    url: data.url,
    headers: Object.freeze({ ...data.headers }),
    text: async () => body,
    json: async () => JSON.parse(body),
  });
}

function describe(thrown) {
  try {
    if (typeof thrown === 'object' && thrown !== null) {
      const message = typeof thrown.message === 'string' ? thrown.message : String(thrown);
      return {
        message: message.slice(0, MAX_MESSAGE_CHARS),
        ...(typeof thrown.name === 'string' ? { name: thrown.name.slice(0, 64) } : {}),
        ...(typeof thrown.code === 'string' ? { errorCode: thrown.code.slice(0, 64) } : {}),
      };
    }
    return { message: String(thrown).slice(0, MAX_MESSAGE_CHARS) };
  } catch {
    return { message: 'the tool threw a value that cannot be described' };
  }
}
