// The last lines of what an upstream server wrote to stderr, as the model,
// `import`, `validate` and `list` may see them when the server does not start
// (SPEC section 2.1): the server's own words, so bounded in lines and
// characters, and redacted (secret values of the host's environment, host
// paths) before the cut, so a cut never leaves a secret's piece behind.

/** Lines of a server's stderr kept for its start failure. */
export const STDERR_TAIL_LINES = 5;
/** Characters of that tail, after redaction. */
export const MAX_STDERR_TAIL_CHARS = 800;

/** Redacts a text and cuts it to `maxChars` (the host's Redactor.cut). */
export type TailRedactor = (text: string, maxChars: number) => string;

/** The last STDERR_TAIL_LINES non-blank lines of `stderr`, redacted and cut to MAX_STDERR_TAIL_CHARS. */
export function stderrTailOf(stderr: string, redact?: TailRedactor): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.replace(/\r$/, '').trimEnd())
    .filter((line) => line.trim() !== '');
  // Redacted whole first: what the cut then drops can no longer be half a secret.
  const tail = redact ? redact(lines.slice(-STDERR_TAIL_LINES).join('\n'), Number.MAX_SAFE_INTEGER) : lines.slice(-STDERR_TAIL_LINES).join('\n');
  return tail.length > MAX_STDERR_TAIL_CHARS ? tail.slice(tail.length - MAX_STDERR_TAIL_CHARS) : tail;
}
