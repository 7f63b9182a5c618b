// Signed approval states for modern clients (SPEC section 6): the host answers
// `input_required` with a state, the client retries the same call with it. The
// state is an HMAC-SHA256 over {tool, argument hash, definition digest, expiry,
// nonce} with a key
// that never leaves this host object, so a client cannot mint, alter, reuse or
// outlive one.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Why a state was refused; each becomes `approval_denied` with this reason. */
type RequestStateProblem = 'forged' | 'altered' | 'expired' | 'replayed' | 'definition_changed';

type RequestStateCheck = { readonly ok: true } | { readonly ok: false; readonly reason: RequestStateProblem };

interface RequestStateOptions {
  /** How long a state stays valid. */
  readonly ttlMs: number;
  /** Clock, for tests of expiry. */
  readonly now?: () => number;
  /** HMAC key; a fresh random 32 bytes when absent. */
  readonly key?: Uint8Array;
}

/** Default lifetime of an approval state: long enough for a person to read the prompt. */
export const DEFAULT_REQUEST_STATE_TTL_MS = 10 * 60_000;

// Bounds what a client can make the host hash and parse.
const MAX_STATE_CHARS = 2048;

export class RequestStateSigner {
  readonly #key: Uint8Array;
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** nonce → expiry; a used nonce is kept until its state would have expired anyway. */
  readonly #used = new Map<string, number>();

  constructor(options: RequestStateOptions) {
    this.#key = options.key ?? randomBytes(32);
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** A fresh state approving one call of `tool` with arguments hashing to `argsHash`, for the definition `definitionDigest`. */
  issue(tool: string, argsHash: string, definitionDigest = ''): string {
    const payload: StatePayload = { v: 1, t: tool, a: argsHash, d: definitionDigest, e: this.#now() + this.#ttlMs, n: randomBytes(16).toString('base64url') };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.#sign(body)}`;
  }

  /** Checks a state for this tool, argument hash and definition, and spends it when it is good. */
  verify(state: unknown, tool: string, argsHash: string, definitionDigest = ''): RequestStateCheck {
    if (typeof state !== 'string' || state.length > MAX_STATE_CHARS) return { ok: false, reason: 'forged' };
    const dot = state.indexOf('.');
    if (dot <= 0) return { ok: false, reason: 'forged' };
    const body = state.slice(0, dot);
    const given = Buffer.from(state.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.#sign(body), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'forged' };
    const payload = parsePayload(body);
    if (!payload) return { ok: false, reason: 'forged' };
    if (payload.t !== tool || payload.a !== argsHash) return { ok: false, reason: 'altered' };
    // Approved for a definition the tool no longer has (a new lock, a server's change): not this call.
    if (payload.d !== definitionDigest) return { ok: false, reason: 'definition_changed' };
    const now = this.#now();
    if (now >= payload.e) return { ok: false, reason: 'expired' };
    this.#forgetExpired(now);
    if (this.#used.has(payload.n)) return { ok: false, reason: 'replayed' };
    this.#used.set(payload.n, payload.e);
    return { ok: true };
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('base64url');
  }

  #forgetExpired(now: number): void {
    for (const [nonce, expiresAt] of this.#used) if (expiresAt <= now) this.#used.delete(nonce);
  }
}

interface StatePayload {
  readonly v: 1;
  /** Tool name. */
  readonly t: string;
  /** Argument hash. */
  readonly a: string;
  /** Definition digest of the tool the approval was asked for. */
  readonly d: string;
  /** Expiry, epoch milliseconds. */
  readonly e: number;
  /** Nonce: makes each state single-use. */
  readonly n: string;
}

function parsePayload(body: string): StatePayload | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { v, t, a, d, e, n } = value as Record<string, unknown>;
  if (v !== 1 || typeof t !== 'string' || typeof a !== 'string' || typeof d !== 'string' || typeof e !== 'number' || typeof n !== 'string') return undefined;
  return { v, t, a, d, e, n };
}
