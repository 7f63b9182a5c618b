// Text the host writes about caller-supplied values (approval prompts, error
// messages): bounded and with control characters escaped, so an argument can
// neither flood a prompt nor forge lines in it (newlines, ANSI escapes,
// bidirectional overrides).

/** Escapes control and bidi-override characters and cuts to `maxChars` with an ellipsis. */
export function escapeForPrompt(text: string, maxChars: number): string {
  const escaped = text.replace(UNSAFE_CHARS, (char) => {
    const code = char.codePointAt(0) ?? 0;
    if (char === '\n') return '\\n';
    if (char === '\r') return '\\r';
    if (char === '\t') return '\\t';
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  if (escaped.length <= maxChars) return escaped;
  // Do not cut a surrogate pair in half.
  let end = Math.max(0, maxChars - 1);
  const last = escaped.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${escaped.slice(0, end)}…`;
}

/** A caller-supplied name in double quotes, escaped and bounded. */
export function quoteForModel(text: string, maxChars: number): string {
  return `"${escapeForPrompt(text, maxChars)}"`;
}

// C0, DEL, C1, line/paragraph separators and bidi controls.
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
