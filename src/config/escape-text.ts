// Text the host shows about values others control (approval prompts, the
// operator's terminal and console): every invisible character as an escape,
// so a value can neither forge a line nor hide what it says (newlines, ANSI
// escapes, bidirectional controls, the Arabic letter mark, zero-width and
// other format characters, line and paragraph separators).

/** Every control (Cc), format (Cf) and line or paragraph separator character as an escape. */
export function escapeInvisible(text: string): string {
  return text.replace(UNSAFE_CHARS, (char) => {
    const code = char.codePointAt(0) ?? 0;
    if (char === '\n') return '\\n';
    if (char === '\r') return '\\r';
    if (char === '\t') return '\\t';
    if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
    return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

// Cc: C0, DEL, C1. Cf: bidi controls and marks (LRM, RLM, ALM U+061C), zero-width
// characters, the BOM, soft hyphen, tag characters. Zl/Zp: line and paragraph separators.
const UNSAFE_CHARS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
