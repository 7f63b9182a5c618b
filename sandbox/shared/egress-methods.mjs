// The HTTP methods a tool's class lets it use (SPEC section 3.2): a read_only
// tool may only read, so ctx.fetch (and the egress proxy, for plain HTTP) let
// it send GET, HEAD and OPTIONS and nothing else. One pure rule for both.
// Plain ESM, no imports from src/.

/** What a read_only tool may send. */
export const READ_ONLY_METHODS = Object.freeze(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a tool of class `sideEffect` may send `method`. Only read_only is held
 * to reading: the other classes (and an unclassified tool, which only runs when
 * strict is off) may send any method the fetch itself supports.
 * @param {string | undefined} sideEffect
 * @param {string} method
 * @returns {boolean}
 */
export function isMethodAllowedForClass(sideEffect, method) {
  if (sideEffect !== 'read_only') return true;
  return READ_ONLY_METHODS.includes(String(method).toUpperCase());
}
