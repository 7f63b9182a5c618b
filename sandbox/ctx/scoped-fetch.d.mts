// Types for scoped-fetch.mjs (ctx.fetch of isolate and worker tools).
import type { EgressAttempt } from '../shared/messages.mjs';

export interface ScopedFetchDenial {
  readonly op: 'fetch';
  /** The refused URL, at most 512 characters, credentials removed. */
  readonly target: string;
  readonly reason: string;
}

/** One ctx.fetch admission, in the runners' shape (sandbox/shared/messages.d.mts). */
export type ScopedFetchAttempt = EgressAttempt & { readonly kind: 'fetch' };

export interface ScopedFetchOptions {
  /** network.allow: `host` (port 443) or `host:port`. Empty: every request is refused. */
  readonly allow: readonly string[];
  /** The tool's class: `read_only` may only send GET, HEAD and OPTIONS. Undefined: unclassified. */
  readonly sideEffect?: string;
  /** Resolves names for admission (tests); default the system resolver. */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
  readonly onDenied?: (denial: ScopedFetchDenial) => void;
  /** Every admission, admitted or refused (journaled as counts). */
  readonly onAttempt?: (attempt: ScopedFetchAttempt) => void;
  /** Aborts the request in flight when the call ends. */
  readonly signal?: AbortSignal;
  /** Default 4 MiB. */
  readonly maxResponseBytes?: number;
  /** Default 1 MiB. */
  readonly maxRequestBytes?: number;
  /** Default 5. */
  readonly maxRedirects?: number;
  /**
   * Out through the egress proxy (an isolate process) instead of directly: `url` is the proxy inside
   * the sandbox, `token` the call's (its grant's openCall), `acquire` bounds connections at once.
   */
  readonly proxy?: ScopedFetchProxy;
}

export interface ScopedFetchProxy {
  readonly url: string;
  readonly token: string;
  readonly acquire?: (signal?: AbortSignal) => Promise<() => void>;
}

export interface FetchInit {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** UTF-8 text; not allowed with GET or HEAD. */
  readonly body?: string;
}

/** Plain data: the ctx wrappers add text() and json(). */
export interface FetchedResponse {
  readonly status: number;
  readonly statusText: string;
  /** The URL of the last hop. */
  readonly url: string;
  /** Lower-case header names. */
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Errors thrown carry a string `code`: `policy_denied`, `host_not_found` (an allowed
 * name that does not resolve), `invalid_argument`, `too_large`, `too_many_redirects`,
 * `invalid_redirect`, `network_error`, `aborted`.
 * A refusal's reason (onDenied) is one of admitEgress's (egress-admission.d.mts) or
 * scheme_not_allowed, credentials_in_url, redirect_scheme_not_allowed, redirect_host_not_allowed.
 */
export type ScopedFetch = (url: string, init?: FetchInit) => Promise<FetchedResponse>;

export interface AllowEntry {
  readonly host: string;
  /** Undefined: a bare entry, port 443 only. */
  readonly port: string | undefined;
}

export const DEFAULT_MAX_RESPONSE_BYTES: number;
export const DEFAULT_MAX_REQUEST_BYTES: number;
export const DEFAULT_MAX_REDIRECTS: number;

export const MAX_RESPONSE_HEAD_BYTES: number;

export function createScopedFetch(options: ScopedFetchOptions): ScopedFetch;
export function createConnectionLimiter(max: number): (signal?: AbortSignal) => Promise<() => void>;
export function isHostAllowed(allow: readonly AllowEntry[], url: URL): boolean;
export function parseAllowEntry(raw: unknown): AllowEntry | undefined;
