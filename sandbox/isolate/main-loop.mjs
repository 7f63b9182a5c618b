// The isolate process's main loop: the host's frames dispatched (init, run,
// stop), each call run in a fresh context of a slot of its own (slot-pool.mjs,
// isolate-slot.mjs), its ctx calls served by ctx-operations.mjs, and its end
// sent as one result, every string of it cut to ISOLATE_WIRE_LIMITS first.
// Importing this module does nothing: isolate-process.mjs, the process's entry,
// builds one loop over its stdin and stdout.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ISOLATE_WIRE_LIMITS, START_TOP_LEVEL_TIMEOUT_MS } from '../shared/limits.mjs';
import { readHostToIsolateMessage } from '../shared/readers.mjs';
import { IsolateSlot, toPreludeClosure } from './isolate-slot.mjs';
import { allReceived, evaluateAtOnce, runAtOnce } from './run-at-once.mjs';
import { SlotPool } from './slot-pool.mjs';
import { createCtxOperations, MAX_PATH_CHARS, MAX_PENDING_CTX_CALLS, newCtxCall } from './ctx-operations.mjs';
import { cut } from './cut.mjs';

/** @typedef {import('../shared/messages.mjs').IsolateInitMessage} IsolateInitMessage */
/** @typedef {import('../shared/messages.mjs').IsolateRunMessage} IsolateRunMessage */
/** @typedef {import('../shared/messages.mjs').IsolateToHostMessage} IsolateToHostMessage */
/**
 * @typedef {import('./ctx-operations.mjs').CtxCall & { callId: string, timeoutMs: number, startedMs: number,
 *   slot: IsolateSlot | undefined, slotMs: number, runMs: number, received: number, inboundUs: number }} Call
 *   `slotMs`, `runMs`: when the call had its context and when its run came back (stage times only);
 *   `received`: messages of its context that reached dispatch (progress, log, ctx requests).
 */

/**
 * The process's way to the host and its own end.
 * @typedef {{ send: (message: IsolateToHostMessage, body?: Uint8Array) => void,
 *   sendNow: (message: IsolateToHostMessage) => void,
 *   die: (why: string, code: number) => void,
 *   exit: (code: number) => void,
 *   onStepAtOnce?: (outcome: 'done' | 'cut') => void }} ProcessIo
 *   `send`: queued on the pipe; `sendNow`: written before it returns (the process ends next);
 *   `die`: a diagnostic on stderr, then the end;
 *   `onStepAtOnce`: told of each call's synchronous first step, over or cut at its slice (a
 *   seam for tests, which cannot see from outside whether a call took that step).
 */

/** Now on the machine's monotonic clock, in µs: the host reads the same clock (stage times only). */
function monotonicUs() {
  return Number(process.hrtime.bigint() / 1000n);
}

/** @param {ProcessIo} io */
export function createMainLoop(io) {
  /** @type {IsolateInitMessage | undefined} */
  let config;
  /** @type {any} */
  let ivm;
  /** @type {SlotPool | undefined} */
  let pool;
  /** @type {ReturnType<typeof createCtxOperations> | undefined} */
  let ctx;
  /** @type {Map<number, Call>} */
  const calls = new Map();
  /** Whether tool code runs in synchronous steps (run-at-once.mjs): from `ready` on, off for good once one ran past its slice. */
  const stepsAtOnce = { on: false };

  /** Whether `call` still runs: what it asks or reports after it answered is dropped (the host drops it anyway). */
  const isRunning = (call) => !call.stopped && calls.get(call.id) === call;

  /** One frame header from the host. @param {unknown} header */
  function onFrame(header) {
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
        io.die(`the host broke the protocol: ${message.reason}`, 65);
    }
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
      io.sendNow({ type: 'start_failed', reason: cut(`${what}${code}`, 200) });
    } finally {
      io.exit(70);
    }
  }

  /**
   * Starts: loads what runs here, prepares the first context (our code only: the prelude, the
   * module compiled and linked), says `loaded`, runs the tool module's top level ahead within the
   * start's time (START_TOP_LEVEL_TIMEOUT_MS, not a call's, under any load) and says `ready`. A
   * process that ends between the two was ended by that top level (its heap): the tool's failure,
   * not a sandbox that cannot start. What cannot be read or loaded is said (`start_failed`) and ends it.
   * @param {IsolateInitMessage} message
   */
  function init(message) {
    if (config !== undefined) return;
    config = message;
    ctx = createCtxOperations({ config: message, send: (event) => io.send(event), isRunning });
    const preludeSource = readOrFail(message.preludePath, 'the isolate prelude cannot be read');
    const toolSource = readOrFail(message.entryPath, "the tool's entry file cannot be read");
    if (preludeSource === undefined || toolSource === undefined) return;
    try {
      ivm = createRequire(import.meta.url)(message.ivmPath);
    } catch (error) {
      failStart('isolated-vm cannot be loaded', error);
      return;
    }
    /** @type {import('./isolate-slot.mjs').SlotSources} */
    const sources = {
      toolName: message.toolName,
      preludeClosure: toPreludeClosure(preludeSource),
      toolSource,
      memoryMb: message.memoryMb,
      runtimeOptions: {
        maxPendingHostCalls: MAX_PENDING_CTX_CALLS,
        // The flood cap, checked in the isolate before the result is copied out of it: in
        // characters, because that is what a string's length costs nothing to read there, and
        // UTF-16 length never exceeds UTF-8 bytes, so only what is surely past the cap is
        // refused there. finishEnvelope measures the bytes that cross.
        maxOutputChars: message.floodCapBytes,
        maxMessageChars: ISOLATE_WIRE_LIMITS.maxIvmMessageChars,
        maxEvents: ISOLATE_WIRE_LIMITS.maxEventsPerCall,
        maxEventChars: ISOLATE_WIRE_LIMITS.maxMessageChars,
        maxPathChars: MAX_PATH_CHARS,
      },
    };
    pool = new SlotPool(message.maxIsolates, () => newSlot(sources));
    const slot = pool.first();
    try {
      // A fresh isolate runs no tool code yet: its first context is prepared synchronously here.
      slot.spares.push(slot.prepareNow());
    } catch (error) {
      failStart('the first isolate context cannot be prepared', error);
      return;
    }
    io.send({ type: 'loaded' });
    slot.firstTopLevelTimeoutMs = START_TOP_LEVEL_TIMEOUT_MS;
    // Ready once the first contexts are prepared and the top level ran ahead: the first call finds one warm.
    slot.refill();
    void slot.whenRefilled().finally(() => {
      // Before any call nothing here disposes an isolate: isolated-vm did, at its heap limit,
      // while the tool module's top level ran ahead. End as V8's own out-of-memory ends this
      // process, so the host reports the module's memory once (memory_limit) and starts no
      // process per call, instead of each call finding a dead isolate.
      if (slot.isolate.isDisposed && !slot.retired) {
        io.die("the tool module's top level ran out of memory: isolated-vm disposed its isolate at the heap limit", 71);
        return;
      }
      io.send({ type: 'ready' });
      stepsAtOnce.on = true; // the start's top level ran on the isolate's thread: its out-of-memory is the verdict above
      pool?.warm();
    });
  }

  /** @param {import('./isolate-slot.mjs').SlotSources} sources */
  function newSlot(sources) {
    return new IsolateSlot(ivm, sources, stepsAtOnce);
  }

  /** @param {IsolateRunMessage} message */
  async function startCall(message) {
    if (config === undefined || pool === undefined || typeof message.id !== 'number' || calls.has(message.id)) return;
    /** @type {Call} */
    const call = {
      ...newCtxCall(message.id, message.egressToken),
      callId: String(message.callId),
      timeoutMs: Math.max(1, Math.ceil(Number(message.timeoutMs) || 1)),
      startedMs: performance.now(),
      slot: undefined,
      slotMs: 0,
      runMs: 0,
      received: 0,
      inboundUs: typeof message.sentAtUs === 'number' ? Math.max(0, monotonicUs() - message.sentAtUs) : 0,
    };
    calls.set(call.id, call);
    const slot = await pool.acquire();
    if (call.stopped) {
      pool.release(slot);
      return;
    }
    call.slot = slot;
    /** @type {import('./isolate-slot.mjs').PreparedContext | undefined} */
    let prepared;
    try {
      /** @type {unknown} */
      let envelope;
      for (;;) {
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
        if (config.stageTimes === true) call.slotMs = performance.now();
        const { runtime } = prepared;
        const settle = (id, ok, value) => {
          if (!isRunning(call)) return;
          slot.runsToolCode(runtime.apply(undefined, ['settle', id, ok, new ivm.ExternalCopy(value).copyInto({ release: true })], { timeout: remainingMs(call) })).catch(() => {
            // The context is gone, or the continuation ran past the deadline: the host stops the call.
          });
        };
        prepared.binding.dispatch = (id, op, args) => {
          call.received += 1;
          ctx?.handle(call, id, op, args, (ok, value) => settle(id, ok, value));
        };
        const { module } = prepared.tool;
        // Evaluated ahead (IsolateSlot.evaluateAhead), or now within the call's deadline.
        const evaluated = prepared.evaluated ?? (await evaluateNow(module, call, slot));
        if (evaluated === undefined) {
          // Past the slice: this context goes, and the call runs again in a fresh one (as below).
          prepared.release();
          prepared = undefined;
          continue;
        }
        if (!evaluated.ok) {
          finishCall(call, ivmFailure(call, evaluated.error, slot, 'evaluate'));
          return;
        }
        const runArgs = ['run', module.namespace.derefInto(), new ivm.ExternalCopy(message.args).copyInto({ release: true }), call.callId];
        try {
          if (slot.mayStepAtOnce) {
            const started = runAtOnce(runtime, runArgs, remainingMs(call), () => slot.isUsable);
            io.onStepAtOnce?.(started === undefined ? 'cut' : 'done');
            if (started === undefined) {
              // Past the slice: this context goes with whatever the run asked of ctx (nothing of
              // it was served: its requests wait behind this step), and the call runs again in a
              // fresh one, on the isolate's thread, as every call of this process now does.
              stepsAtOnce.on = false;
              call.received = 0;
              prepared.release();
              prepared = undefined;
              continue;
            }
            envelope = await started;
            await allReceived(call, envelope);
          } else {
            envelope = await slot.runsToolCode(runtime.apply(undefined, runArgs, { timeout: remainingMs(call), result: { copy: true, promise: true } }));
          }
        } catch (error) {
          finishCall(call, ivmFailure(call, error, slot, 'run'));
          return;
        }
        break;
      }
      if (config.stageTimes === true) call.runMs = performance.now();
      finishEnvelope(call, envelope);
    } finally {
      prepared?.release();
      calls.delete(call.id);
      // The call's fetches in flight end with it (the host closes its token at the proxy too).
      call.aborter?.abort();
      void pool.afterCall(slot, call.stopped);
    }
  }

  /**
   * The module's top level run within the call's deadline, at once when the slot allows (undefined: cut at the slice).
   * @returns {Promise<{ ok: true } | { ok: false, error: unknown } | undefined>}
   */
  async function evaluateNow(module, call, slot) {
    try {
      if (slot.mayStepAtOnce) {
        if (evaluateAtOnce(module, remainingMs(call), () => slot.isUsable)) return { ok: true };
        stepsAtOnce.on = false;
        return undefined;
      }
      await slot.runsToolCode(module.evaluate({ timeout: remainingMs(call) }));
      return { ok: true };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /**
   * Sends a successful or failed envelope. A success's JSON is encoded once, to the
   * bytes that cross as the frame's body, and their count is held to the flood cap
   * (the bound at which a tool is stopped): past it the host is told `output_limit`
   * and the bytes never cross. The host bounds the frame again on arrival, since
   * it trusts nothing from here.
   */
  function finishEnvelope(call, envelope) {
    if (typeof envelope !== 'object' || envelope === null) {
      finishCall(call, { type: 'result', id: call.id, kind: 'envelope', envelope: {} });
      return;
    }
    if (envelope.ok === true && typeof envelope.json === 'string') {
      const body = Buffer.from(envelope.json, 'utf8');
      if (body.length > /** @type {IsolateInitMessage} */ (config).floodCapBytes) {
        finishCall(call, { type: 'result', id: call.id, kind: 'envelope', envelope: { ok: false, code: 'output_limit' } });
        return;
      }
      finishCall(call, { type: 'result', id: call.id, kind: 'envelope', envelope: { ok: true, bodyBytes: body.length }, ...stageTimes(call) }, body);
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

  /** @param {Call} call @param {IsolateToHostMessage} message @param {Uint8Array} [body] */
  function finishCall(call, message, body) {
    if (!calls.has(call.id)) return;
    calls.delete(call.id);
    if (!call.stopped) io.send(message, body);
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
    io.send({ type: 'stopped', id });
  }

  /**
   * Where the call's time went here, when the host asked (init's stageTimes): to its
   * context, in its run, and its result's JSON encoded.
   * @param {Call} call
   */
  function stageTimes(call) {
    if (config?.stageTimes !== true || call.slotMs === 0 || call.runMs === 0) return {};
    const us = (ms) => Math.max(0, Math.round(ms * 1000));
    return {
      times: {
        slotUs: us(call.slotMs - call.startedMs),
        runUs: us(call.runMs - call.slotMs),
        encodeUs: us(performance.now() - call.runMs),
        inboundUs: call.inboundUs,
        sentAtUs: monotonicUs(),
      },
    };
  }

  function remainingMs(call) {
    return Math.max(1, Math.ceil(call.timeoutMs - (performance.now() - call.startedMs)));
  }

  /**
   * isolated-vm's failure as bounded facts; the host maps them to codes (isolate-errors.ts).
   * @param {Call} call @param {unknown} error @param {IsolateSlot} slot @param {'prepare' | 'evaluate' | 'run'} stage
   * @returns {IsolateToHostMessage}
   */
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

  return { onFrame };
}
