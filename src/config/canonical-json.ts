// RFC 8785 (JSON Canonicalization Scheme) for the chained journal: the bytes a
// record's hash and a checkpoint's signature cover. The canonicalisation is the
// `canonicalize` package's (kept by an author of RFC 8785); this file only
// makes every string well formed first, because a lone UTF-16 surrogate (a
// tool name or an idempotency key a caller wrote as "\ud800") has no UTF-8
// encoding and the library refuses it: a record must never be unchainable.
import canonicalize from 'canonicalize';

/** The RFC 8785 canonical JSON text of plain data (strings made well formed). */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(wellFormed(value));
  if (text === undefined) throw new TypeError('a chained record must be JSON data');
  return text;
}

/** Plain data with lone surrogates replaced by U+FFFD, as a chained record keeps them. */
function wellFormed<T>(value: T): T {
  if (typeof value === 'string') return toWellFormed(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item: unknown) => wellFormed(item)) as T;
  const copy: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) copy[toWellFormed(key)] = wellFormed(member);
  return copy as T;
}

function toWellFormed(text: string): string {
  // String.prototype.isWellFormed / toWellFormed: V8 11.1+, so every Node 20.
  const native = text as string & { isWellFormed(): boolean; toWellFormed(): string };
  return native.isWellFormed() ? text : native.toWellFormed();
}

/** The sorted keys of a flat record, each with its `"key":` text made once (flatKeys()). */
interface FlatKeys {
  readonly keys: readonly string[];
  readonly prefixes: readonly string[];
}

/** The keys of canonicalFlatJson's records, given already sorted (RFC 8785 order). */
export function flatKeys(sortedKeys: readonly string[]): FlatKeys {
  return { keys: sortedKeys, prefixes: sortedKeys.map((key) => `${JSON.stringify(toWellFormed(key))}:`) };
}

/**
 * The same canonical text for a flat record (values: strings, finite numbers,
 * booleans, null) whose keys are given already sorted: one pass, no recursion,
 * no copy, each key's text made once. The journal writes one per call on the
 * host's event loop; a test holds it to canonicalJson for every kind of value.
 */
export function canonicalFlatJson(record: Readonly<Record<string, unknown>>, { keys, prefixes }: FlatKeys): string {
  let text = '';
  for (let index = 0; index < keys.length; index++) {
    const value = record[keys[index] as string];
    if (value === undefined) continue;
    let encoded: string;
    if (value === null) encoded = 'null';
    else if (typeof value === 'string') encoded = JSON.stringify(toWellFormed(value));
    else if (typeof value === 'boolean') encoded = value ? 'true' : 'false';
    else if (typeof value === 'number' && Number.isFinite(value)) encoded = JSON.stringify(value);
    else return canonicalJson(record);
    text += `${text === '' ? '{' : ','}${prefixes[index] as string}${encoded}`;
  }
  return text === '' ? '{}' : `${text}}`;
}
