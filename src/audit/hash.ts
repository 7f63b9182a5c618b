// Hashes the journal stores instead of content: SHA-256 of the canonical JSON
// of the arguments (so key order does not change the hash) and of result bytes.
// Both run on every call, on the host's event loop: the common case (arguments
// whose keys are already in order, a one-shot digest) allocates nothing but the result.
import * as crypto from 'node:crypto';

// crypto.hash (Node 20.12+) digests in one native call, without a Hash stream object.
const oneShotHash: typeof crypto.hash | undefined = typeof crypto.hash === 'function' ? crypto.hash : undefined;

/** Lowercase hex SHA-256 of bytes or of a string's UTF-8 encoding. */
export function sha256Hex(data: Uint8Array | string): string {
  if (oneShotHash !== undefined) return oneShotHash('sha256', data, 'hex');
  return crypto.createHash('sha256').update(data).digest('hex');
}

/**
 * JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` hash alike.
 * Values follow JSON.stringify (undefined members dropped, non-finite numbers null).
 */
export function canonicalJson(value: unknown): string {
  // Already canonical (the usual case: one key, or keys a client wrote in order): JSON.stringify
  // emits exactly what the sorted copy would, so the copy is skipped.
  if (isCanonical(value, 0)) return JSON.stringify(value);
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

/** The argument hash of a call: sha256 hex of the canonical JSON of its arguments. */
export function hashArgs(args: unknown): string {
  return sha256Hex(canonicalJson(args ?? {}));
}

/** True for a 64-character lowercase hex SHA-256. */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}

/** Deeper than this, isCanonical gives up and sortKeys decides (same result, no deep recursion here). */
const MAX_CANONICAL_CHECK_DEPTH = 64;

/**
 * True when JSON.stringify(value) is already the canonical JSON: plain data only
 * (strings, numbers, booleans, null, arrays without holes or undefined, objects with
 * Object.prototype or null prototype and no toJSON) whose keys are in sorted order at
 * every depth. Both JSON.stringify calls emit keys in the object's own enumeration
 * order (integer-like keys first), so keys that already enumerate sorted give the same
 * text as the sorted copy. Anything else is false, and sortKeys builds the copy as before.
 */
function isCanonical(value: unknown, depth: number): boolean {
  if (value === null) return true;
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean') return true;
  if (typeof value !== 'object' || depth > MAX_CANONICAL_CHECK_DEPTH) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      if (item === undefined || !isCanonical(item, depth + 1)) return false;
    }
    return true;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  let previous: string | undefined;
  for (const key of Object.keys(value)) {
    if (previous !== undefined && !(previous < key)) return false;
    previous = key;
    const member: unknown = (value as Record<string, unknown>)[key];
    if (member === undefined || !isCanonical(member, depth + 1)) return false;
  }
  return true;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const withJson = value as { toJSON?: unknown };
  if (typeof withJson.toJSON === 'function') return value;
  // A null prototype keeps a "__proto__" key as data instead of setting the prototype.
  const sorted = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value).sort()) {
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return sorted;
}
