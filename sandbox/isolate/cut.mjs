// Plain ESM: the isolate process's one way to bound a string before it crosses to the host.

/**
 * `text`, at most `maxChars` UTF-16 units of it.
 * @param {string} text
 * @param {number} maxChars
 */
export function cut(text, maxChars) {
  return text.length > maxChars ? text.slice(0, maxChars) : text;
}
