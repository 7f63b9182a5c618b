// Redaction of everything a tool hands back to the model (SPEC section 5 step
// 9): values of secret environment variables (however the tool came by them),
// stack-trace lines, and absolute host paths outside the workspace. Applied to
// result text, every string (and key) of a JSON result, tool error messages and
// stderr tails.
import { sep } from 'node:path';

export const REDACTED = '[redacted]';
export const REDACTED_PATH = '[path]';
export const REDACTED_STACK = '[stack trace]';

export interface RedactorOptions {
  /** Values never to show; empty strings are ignored. */
  readonly secretValues: readonly string[];
  /** Absolute folders whose paths may be shown (the workspace; the tool's roots). */
  readonly visibleRoots: readonly string[];
}

/**
 * Redacts one text. `secretValues`, when present, are the values it replaces: binary
 * parts cannot be redacted without corrupting them, so they are checked against these.
 */
export type Redactor = ((text: string) => string) & { readonly secretValues?: readonly string[] };

/** Builds the text redactor for one host (secret values are fixed at startup). */
export function createRedactor(options: RedactorOptions): Redactor {
  // Longest first, so a secret that contains another is replaced whole.
  const secrets = [...new Set(options.secretValues.filter((value) => value.length > 0))].sort((a, b) => b.length - a.length);
  const roots = options.visibleRoots.map((root) => root.replace(/\/+$/, ''));
  const isVisible = (path: string): boolean => roots.some((root) => root !== '' && (path === root || path.startsWith(root + sep)));

  const redact = (text: string): string => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    out = redactStackLines(out);
    out = out.replace(FILE_URL, (match: string, path: string) => (isVisible(path) ? match : `file://${REDACTED_PATH}`));
    out = out.replace(ABSOLUTE_PATH, (path: string) => (isVisible(path) ? path : REDACTED_PATH));
    return out;
  };
  return Object.assign(redact, { secretValues: Object.freeze(secrets) });
}

/** True when `bytes` hold the value of a secret (as UTF-8), which redaction cannot cut out of binary data. */
export function bytesHoldSecret(bytes: Uint8Array, redact: Redactor): boolean {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return (redact.secretValues ?? []).some((secret) => buffer.includes(secret, 0, 'utf8'));
}

/** Applies `redact` to every string and key of a JSON value; returns a new value. */
export function redactJson(value: unknown, redact: Redactor): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, redact));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty: a key named __proto__ stays an own data property.
      Object.defineProperty(out, redact(key), { value: redactJson(item, redact), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

// Node (`    at fn (/x/y.js:1:2)`, `    at /x/y.js:1:2`, `at new Promise (<anonymous>)`) and
// Python (`  File "/x.py", line 3, in f`) frames. Checked line by line with
// linear scans, not one backtracking regex: tool output is hostile and this
// runs on the host's event loop.
function redactStackLines(text: string): string {
  if (!text.includes('at ') && !text.includes('File "')) return text;
  const lines = text.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    if (!isStackLine(line)) out.push(line);
    // A run of frames becomes one marker line, so the shape of the message survives.
    else if (out[out.length - 1] !== REDACTED_STACK) out.push(REDACTED_STACK);
  }
  return out.join('\n');
}

/** Longest line considered a stack frame; longer lines are content. */
const MAX_FRAME_CHARS = 4096;
const PYTHON_FRAME = /^File "[^"\n]*", line \d+/;

function isStackLine(line: string): boolean {
  const frame = line.trim();
  if (frame.length > MAX_FRAME_CHARS) return false;
  if (frame.startsWith('File "')) return PYTHON_FRAME.test(frame);
  if (!frame.startsWith('at ')) return false;
  if (frame.endsWith('(native)') || frame.endsWith('<anonymous>)') || frame.endsWith('<anonymous>')) return true;
  return endsWithIndex(frame) || endsWithLineAndColumn(frame);
}

// `(index 3)`, as in `at async Promise.all (index 3)`.
function endsWithIndex(frame: string): boolean {
  if (!frame.endsWith(')')) return false;
  const open = frame.lastIndexOf('(index ');
  return open >= 0 && /^\d+$/.test(frame.slice(open + 7, -1));
}

// `:12:34` or `:12:34)` at the end.
function endsWithLineAndColumn(frame: string): boolean {
  let end = frame.endsWith(')') ? frame.length - 1 : frame.length;
  for (let fields = 0; fields < 2; fields++) {
    let start = end;
    while (start > 0 && isDigit(frame.charCodeAt(start - 1))) start--;
    if (start === end || frame.charCodeAt(start - 1) !== 0x3a /* : */) return false;
    end = start - 1;
  }
  return true;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

// An absolute path: a `/` not preceded by a word character, dot, colon or slash
// (so URLs like https://host/path and relative paths like ../a/b are left alone),
// then at least one path segment.
const ABSOLUTE_PATH = /(?<![\w.:/~\\-])\/[\w.@+,=%~-]+(?:\/[\w.@+,=%~-]+)*\/?/g;
const FILE_URL = /file:\/\/(\/[^\s"'<>`]*)/g;
