// The last lines of what an upstream server wrote to stderr, as people
// (`import`, `validate`, `list`) and the model (`sandbox_unavailable`) are
// shown them when the server would not start. The server's words: redacted
// first (a secret cut in half would no longer match), then bounded in lines
// and characters, control characters replaced so a line cannot rewrite the
// terminal it is printed on.

/** Lines of a server's stderr shown when it does not start. */
export const STDERR_TAIL_LINES = 5;
/** Characters of one shown line (after redaction). */
export const STDERR_TAIL_LINE_CHARS = 240;

interface StderrTailOptions {
  /** Default STDERR_TAIL_LINES. */
  readonly maxLines?: number;
  /** Default STDERR_TAIL_LINE_CHARS. */
  readonly maxLineChars?: number;
  /**
   * Redacts a text and cuts it to `maxChars` (the host's Redactor.cut, keeping the
   * head); without one the lines are only cut. Callers that show the lines to anyone
   * but the host's own log pass one.
   */
  readonly redact?: (text: string, maxChars: number) => string;
}

/** The last non-blank lines of `tail` (a drained stderr tail, see TailBuffer), redacted and bounded; oldest first. */
export function lastStderrLines(tail: string, options: StderrTailOptions = {}): string[] {
  const maxLines = options.maxLines ?? STDERR_TAIL_LINES;
  const maxLineChars = options.maxLineChars ?? STDERR_TAIL_LINE_CHARS;
  const lines: string[] = [];
  // From the end, so a long tail costs only the lines that are kept.
  let end = tail.length;
  while (end > 0 && lines.length < maxLines) {
    const start = tail.lastIndexOf('\n', end - 1) + 1;
    const line = tail.slice(start, end).replace(/\r$/, '');
    end = start - 1;
    if (line.trim() === '') continue;
    const shown = options.redact ? options.redact(line, maxLineChars) : cutLine(line, maxLineChars);
    lines.unshift(escapeControls(shown));
  }
  return lines;
}

/** The lines as one indented block after a sentence (`…; the last lines of its stderr:`), or '' when there are none. */
export function formatStderrLines(lines: readonly string[], indent = '    '): string {
  return lines.length === 0 ? '' : lines.map((line) => `\n${indent}${line}`).join('');
}

function cutLine(line: string, maxChars: number): string {
  if (line.length <= maxChars) return line;
  let end = maxChars;
  // Never split a surrogate pair.
  const code = line.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return line.slice(0, end);
}

// Terminal escapes and other C0/C1 controls (tabs kept) become U+FFFD.
function escapeControls(line: string): string {
  // eslint-disable-next-line no-control-regex
  return line.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\ufffd');
}
