// Hashes the journal stores instead of content: SHA-256 of the canonical JSON
// of the arguments (so key order does not change the hash) and of result bytes.
import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256 of bytes or of a string's UTF-8 encoding. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` hash alike.
 * Values follow JSON.stringify (undefined members dropped, non-finite numbers null).
 */
export function canonicalJson(value: unknown): string {
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
