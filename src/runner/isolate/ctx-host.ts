// The host side of an isolate tool's ctx: each ctx call arrives as plain copied
// data (op name and arguments), is checked and carried out here with the scoped
// fs and fetch, and answered with a copy. Nothing the tool sends is trusted.
import type { Logger } from '../../log.js';
import type { RunSpec } from '../types.js';
import type { RunOptions, ToolLogLevel } from '../wire.js';
import { createScopedFs } from '../../../sandbox/scoped-fs.mjs';
import { createScopedFetch, type ScopedFetch } from '../../../sandbox/scoped-fetch.mjs';

/** Failure answer to a ctx call: becomes an Error with this `code` inside the tool. */
export interface CtxFailure {
  readonly code: string;
  readonly message: string;
  readonly maxBytes?: number;
  readonly maxEntries?: number;
}

export interface CtxHost {
  /** Entry point for the isolate's host callback; id 0 means fire-and-forget (progress, log). */
  dispatch(id: unknown, op: unknown, args: unknown): void;
  /** Ends the call: later ctx calls are ignored and fetches in flight are aborted. */
  close(): void;
}

export interface CtxHostInput {
  readonly spec: RunSpec;
  readonly options: RunOptions;
  readonly callId: string;
  readonly logger: Logger;
  /** Delivers the answer to ctx call `id` back into the isolate. */
  readonly settle: (id: number, ok: boolean, value: unknown) => void;
}

/** Most ctx calls one tool call may have outstanding at once. */
export const MAX_PENDING_CTX_CALLS = 32;
/** Longest log or progress message forwarded, in characters. */
export const MAX_CTX_MESSAGE_CHARS = 4000;
/** Log and progress events forwarded per call; the rest are dropped. */
export const MAX_CTX_EVENTS = 10_000;

const LOG_LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

/** Builds the dispatcher that serves one call's ctx.fs, ctx.fetch, ctx.progress and ctx.log. */
export function createCtxHost(input: CtxHostInput): CtxHost {
  const { spec, options, callId, logger } = input;
  // Made on the first fetch only: an abort() at the end of every call cost 20 µs (a DOMException each).
  let abort: AbortController | undefined;
  const onDenied = (denial: { op: string; target: string; reason: string }): void => {
    logger.info({ callId, tool: spec.name, denial }, 'sandbox refused a ctx call');
    options.onDenied?.(denial);
  };
  const fs = createScopedFs({ roots: spec.roots, protectedPaths: spec.protectedPaths ?? [], hiddenPaths: spec.hiddenPaths ?? [], onDenied });
  let scopedFetch: ScopedFetch | undefined;
  const fetchScoped: ScopedFetch = (url, init) => {
    abort ??= new AbortController();
    scopedFetch ??= createScopedFetch({
      allow: spec.networkAllow, ...(spec.sideEffect !== undefined ? { sideEffect: spec.sideEffect } : {}), onDenied, signal: abort.signal,
      ...(options.onEgress === undefined ? {} : { onAttempt: options.onEgress }),
    });
    return scopedFetch(url, init);
  };
  let pending = 0;
  let events = 0;
  let closed = false;

  async function perform(op: string, args: readonly unknown[]): Promise<unknown> {
    switch (op) {
      case 'fs.readText':
        return fs.readText(stringArg(args[0]));
      case 'fs.writeText':
        return fs.writeText(stringArg(args[0]), stringArg(args[1]));
      case 'fs.list':
        return fs.list(stringArg(args[0]));
      case 'fs.stat':
        return fs.stat(stringArg(args[0]));
      case 'fetch':
        return fetchScoped(stringArg(args[0]), fetchInit(args[1]));
      default:
        throw Object.assign(new Error('unknown ctx operation'), { code: 'invalid_argument' });
    }
  }

  function notify(op: string, args: readonly unknown[]): void {
    if (events >= MAX_CTX_EVENTS) return;
    events += 1;
    if (op === 'progress') {
      const [progress, total, message] = args;
      if (typeof progress !== 'number' || !Number.isFinite(progress)) return;
      options.onProgress?.({
        progress,
        ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}),
        ...(typeof message === 'string' ? { message: message.slice(0, MAX_CTX_MESSAGE_CHARS) } : {}),
      });
    } else if (op === 'log') {
      const [rawLevel, rawMessage] = args;
      const level = (typeof rawLevel === 'string' && LOG_LEVELS.has(rawLevel) ? rawLevel : 'info') as ToolLogLevel;
      const message = String(rawMessage).slice(0, MAX_CTX_MESSAGE_CHARS);
      if (options.onLog) options.onLog(level, message);
      else logger.debug({ callId, tool: spec.name, level }, message);
    }
  }

  return {
    dispatch(id, op, args) {
      if (closed || typeof op !== 'string' || !Array.isArray(args)) return;
      if (id === 0) {
        notify(op, args);
        return;
      }
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return;
      if (pending >= MAX_PENDING_CTX_CALLS) {
        input.settle(id, false, { code: 'too_many_pending', message: 'too many ctx calls are pending' });
        return;
      }
      pending += 1;
      perform(op, args).then(
        (value) => {
          pending -= 1;
          if (!closed) input.settle(id, true, value);
        },
        (error: unknown) => {
          pending -= 1;
          if (!closed) input.settle(id, false, toFailure(error));
        },
      );
    },
    close() {
      closed = true;
      abort?.abort();
    },
  };
}

/** A thrown error as plain data for the tool: only the code, the message and the limits cross. */
export function toFailure(error: unknown): CtxFailure {
  if (typeof error === 'object' && error !== null) {
    const record = error as Record<string, unknown>;
    // Only the sandbox modules' own errors (snake_case codes, path-free messages) pass
    // their message on; a raw Node error could name a host path.
    const isOwn = typeof record['code'] === 'string' && /^[a-z][a-z_]{0,63}$/.test(record['code']);
    if (!isOwn) return { code: 'io_error', message: 'the ctx call failed' };
    const code = record['code'] as string;
    const message = typeof record['message'] === 'string' ? record['message'] : 'the ctx call failed';
    return {
      code,
      message,
      ...(typeof record['maxBytes'] === 'number' ? { maxBytes: record['maxBytes'] } : {}),
      ...(typeof record['maxEntries'] === 'number' ? { maxEntries: record['maxEntries'] } : {}),
    };
  }
  return { code: 'host_error', message: 'the ctx call failed' };
}

function stringArg(value: unknown): string {
  if (typeof value !== 'string') throw Object.assign(new Error('expected a string argument'), { code: 'invalid_argument' });
  return value;
}

function fetchInit(value: unknown): { method?: string; headers?: Record<string, string>; body?: string } {
  if (typeof value !== 'object' || value === null) return {};
  const record = value as Record<string, unknown>;
  const init: { method?: string; headers?: Record<string, string>; body?: string } = {};
  if (typeof record['method'] === 'string') init.method = record['method'];
  if (typeof record['body'] === 'string') init.body = record['body'];
  const headers = record['headers'];
  if (typeof headers === 'object' && headers !== null) {
    init.headers = {};
    for (const [name, headerValue] of Object.entries(headers)) init.headers[name] = String(headerValue);
  }
  return init;
}
