// Text the host writes about caller-supplied values (approval prompts, error
// messages): bounded and with every invisible character escaped, so an
// argument can neither flood a prompt, forge lines in it, nor hide what it
// says (newlines, ANSI escapes, bidirectional controls, the Arabic letter
// mark, zero-width and other format characters).
import { escapeInvisible } from '../config/escape-text.js';

/** Escapes control and format characters and cuts to `maxChars` with an ellipsis. */
export function escapeForPrompt(text: string, maxChars: number): string {
  const escaped = escapeInvisible(text);
  if (escaped.length <= maxChars) return escaped;
  return `${headOf(escaped, Math.max(0, maxChars - 1))}…`;
}

/**
 * Escapes like escapeForPrompt, but a text longer than `maxChars` keeps its head
 * and its tail (a dangerous part may be at the end) and says how many bytes of
 * the middle were left out.
 */
export function escapeHeadAndTail(text: string, maxChars: number): string {
  const escaped = escapeInvisible(text);
  if (escaped.length <= maxChars) return escaped;
  // The marker's own length depends on the count: reserve the widest it can be.
  const room = Math.max(0, maxChars - marker(Buffer.byteLength(escaped, 'utf8')).length);
  const head = headOf(escaped, Math.ceil(room / 2));
  const tail = tailOf(escaped, Math.floor(room / 2));
  const leftOut = escaped.slice(head.length, escaped.length - tail.length);
  return `${head}${marker(Buffer.byteLength(leftOut, 'utf8'))}${tail}`;
}

/** A caller-supplied name in double quotes, escaped and bounded. */
export function quoteForModel(text: string, maxChars: number): string {
  return `"${escapeForPrompt(text, maxChars)}"`;
}

function marker(bytes: number): string {
  return `…[${bytes} bytes left out]…`;
}

// Neither cut splits a surrogate pair.
function headOf(text: string, chars: number): string {
  let end = Math.min(text.length, chars);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}

function tailOf(text: string, chars: number): string {
  if (chars <= 0) return '';
  let start = Math.max(0, text.length - chars);
  const first = text.charCodeAt(start);
  if (first >= 0xdc00 && first <= 0xdfff) start++;
  return text.slice(start);
}
