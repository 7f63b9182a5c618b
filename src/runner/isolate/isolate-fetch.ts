// ctx.fetch of an isolate tool, served by the host for its isolate process
// (which has no network at all) until the egress proxy serves it inside the
// sandbox: the one seam to route through the proxy. The request arrives already
// bounded by the isolate process (URL, headers, body) and is carried out by the
// scoped fetch (the egress admission at every hop, as for the proxy: allowlist,
// no loopback/private/metadata addresses, read_only methods; response body bounded).
import { createScopedFetch, type FetchedResponse, type ScopedFetchAttempt, type ScopedFetchDenial } from '../../../sandbox/scoped-fetch.mjs';
import type { CtxFailureData } from '../wire.js';

export interface IsolateFetchRequest {
  readonly url: string;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface IsolateFetchOptions {
  /** The tool's network.allow (after the policy's intersection). */
  readonly allow: readonly string[];
  /** The tool's class: a read_only tool may only send GET, HEAD and OPTIONS. */
  readonly sideEffect?: string;
  /** Aborted when the call ends. */
  readonly signal: AbortSignal;
  readonly onDenied: (denial: ScopedFetchDenial) => void;
  /** Every admission, admitted or refused (journaled as counts). */
  readonly onAttempt?: (attempt: ScopedFetchAttempt) => void;
}

export type IsolateFetchAnswer = { readonly ok: true; readonly response: FetchedResponse } | { readonly ok: false; readonly failure: CtxFailureData };

/** Performs one ctx.fetch; never throws (a failure becomes data for the tool). */
export async function serveIsolateFetch(request: IsolateFetchRequest, options: IsolateFetchOptions): Promise<IsolateFetchAnswer> {
  const scopedFetch = createScopedFetch({
    allow: options.allow,
    ...(options.sideEffect !== undefined ? { sideEffect: options.sideEffect } : {}),
    onDenied: options.onDenied,
    ...(options.onAttempt !== undefined ? { onAttempt: options.onAttempt } : {}),
    signal: options.signal,
  });
  try {
    const init = {
      ...(request.method !== undefined ? { method: request.method } : {}),
      ...(request.headers !== undefined ? { headers: request.headers } : {}),
      ...(request.body !== undefined ? { body: request.body } : {}),
    };
    return { ok: true, response: await scopedFetch(request.url, init) };
  } catch (error) {
    return { ok: false, failure: toCtxFailure(error) };
  }
}

/** A thrown error as plain data for the tool: only the code, the message and the limits cross. */
export function toCtxFailure(error: unknown): CtxFailureData {
  if (typeof error === 'object' && error !== null) {
    const record = error as Record<string, unknown>;
    // Only the sandbox modules' own errors (snake_case codes, path-free messages) pass
    // their message on; a raw Node error could name a host path.
    const code = record['code'];
    if (typeof code !== 'string' || !/^[a-z][a-z_]{0,63}$/.test(code)) return { code: 'io_error', message: 'the ctx call failed' };
    const message = typeof record['message'] === 'string' ? record['message'].slice(0, 8192) : 'the ctx call failed';
    return {
      code,
      message,
      ...(typeof record['maxBytes'] === 'number' ? { maxBytes: record['maxBytes'] } : {}),
      ...(typeof record['maxEntries'] === 'number' ? { maxEntries: record['maxEntries'] } : {}),
    };
  }
  return { code: 'host_error', message: 'the ctx call failed' };
}
