// The id of an inbound line, recovered to answer it: from a raw id value, or
// from the first bytes of a line that does not parse (too long, not JSON). A
// leaf module: the boundary's refusals and serve's early front both use it.
import { isRequestId } from './request-id.js';

/** An id to answer with; null when none could be recovered. */
type LineId = string | number | null;

/** A raw JSON id value, parsed: the id, or null when it is not a usable one (it may throw on text that is not JSON). */
export function parseIdText(raw: string): LineId {
  const value: unknown = JSON.parse(raw);
  return isRequestId(value) ? value : null;
}

/**
 * Best-effort id recovery from text that is not valid JSON: the first `"id"`
 * key met at the top level of the outermost object, tracking nesting loosely
 * (strings are skipped so braces inside them do not count).
 */
export function recoverIdFromPrefix(text: string): LineId {
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = findStringEnd(text, i);
      if (end === -1) return null;
      if (depth === 1 && text.slice(i, end + 1) === '"id"') {
        const match = ID_VALUE.exec(text.slice(end + 1, end + 1 + 300));
        if (match?.[1] !== undefined) {
          try {
            const value = parseIdText(match[1]);
            if (value !== null) return value;
          } catch {
            // A malformed candidate: keep looking.
          }
        }
      }
      i = end + 1;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
    i++;
  }
  return null;
}

const ID_VALUE = /^\s*:\s*(-?\d{1,16}(?![\d.eE])|"(?:[^"\\\u0000-\u001f]|\\.){0,256}")/;

function findStringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i;
  }
  return -1;
}
