// A worker tool's result as JSON, for worker-entry.mjs's answer, as in the
// isolate prelude: an undefined object property is left out as JSON.stringify
// does; functions, symbols, BigInt, non-finite numbers and undefined elsewhere
// are refused with where they are. Every result of every worker call passes
// here. Most are plain data, which JSON.stringify writes alone just as the
// checks would let it through; anything else takes the checked pass, which only
// checks types; where a value is refused, a second pass finds its path (a JSON
// pointer).

/**
 * The result's JSON, or why it is not JSON (and where, when that can be told).
 * @param {unknown} value
 * @returns {{ json?: string, reason?: string, path?: string }}
 */
export function serializeResult(value) {
  const plain = plainJson(value);
  if (plain !== undefined) return { json: plain };
  const checked = stringify(value, false);
  if (checked.json !== undefined || checked.reason === 'too_deep' || checked.reason === 'not_serializable') return checked;
  // The first pass's reason stands if a getter answers otherwise the second time.
  const located = stringify(value, true);
  return located.path !== undefined ? located : { reason: checked.reason };
}

/**
 * The JSON of plain data, or undefined for the checked pass to decide. A getter of the
 * tool's may throw (or answer a BigInt to JSON.stringify's second read): that is the
 * checked pass's to refuse as not JSON, never an exception out of the call's answer.
 * @param {unknown} value
 * @returns {string | undefined}
 */
function plainJson(value) {
  try {
    return isPlainJson(value, MAX_PLAIN_DEPTH) ? JSON.stringify(value) : undefined;
  } catch {
    return undefined;
  }
}

/** Deeper than this, a result takes the checked pass (which tells too_deep where JSON.stringify gives up). */
const MAX_PLAIN_DEPTH = 64;

/**
 * True when JSON.stringify writes `value` as the checked pass would accept it: plain
 * objects and arrays (no toJSON, no holes) of strings, finite numbers, booleans and
 * null, undefined object members aside (both leave them out). The checked pass calls
 * its replacer for every member, several times JSON.stringify's own cost on a small
 * result; this walk is a fraction of it. The tool's getters are read twice (here, then
 * by JSON.stringify); the host checks whatever JSON comes back all the same.
 * @param {unknown} value
 * @param {number} depth
 * @returns {boolean}
 */
function isPlainJson(value, depth) {
  if (value === null) return true;
  const type = typeof value;
  if (type === 'string' || type === 'boolean') return true;
  if (type === 'number') return Number.isFinite(value);
  if (type !== 'object' || depth === 0) return false;
  const object = /** @type {Record<string, unknown>} */ (value);
  if (typeof object['toJSON'] === 'function') return false;
  if (Array.isArray(object)) {
    for (let index = 0; index < object.length; index++) if (!isPlainJson(object[index], depth - 1)) return false;
    return true;
  }
  const prototype = Object.getPrototypeOf(object);
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = object[key];
    if (item !== undefined && !isPlainJson(item, depth - 1)) return false;
  }
  return true;
}

function stringify(value, withPaths) {
  let reason;
  let path;
  const paths = withPaths ? new WeakMap() : undefined;
  /** @this {object} the object or array that holds `item` */
  const replacer = function (key, item) {
    const type = typeof item;
    if (type === 'undefined' && key !== '' && !Array.isArray(this)) return undefined;
    if (type === 'bigint' || type === 'function' || type === 'symbol' || type === 'undefined') reason = type;
    else if (type === 'number' && !Number.isFinite(item)) reason = 'non_finite_number';
    if (paths === undefined) {
      if (reason !== undefined) throw new Error(reason);
      return item;
    }
    const here = key === '' && paths.get(this) === undefined ? '' : `${paths.get(this) ?? ''}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (reason !== undefined) {
      path = here === '' ? '/' : here;
      throw new Error(reason);
    }
    if (type === 'object' && item !== null) paths.set(item, here);
    return item;
  };
  try {
    return { json: JSON.stringify(value, replacer) };
  } catch (error) {
    if (reason !== undefined) return { reason, path };
    return { reason: error instanceof RangeError ? 'too_deep' : 'not_serializable' };
  }
}
