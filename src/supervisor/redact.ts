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

export type Redactor = (text: string) => string;

/** Builds the text redactor for one host (secret values are fixed at startup). */
export function createRedactor(options: RedactorOptions): Redactor {
  // Longest first, so a secret that contains another is replaced whole.
  const secrets = [...new Set(options.secretValues.filter((value) => value.length > 0))].sort((a, b) => b.length - a.length);
  const roots = options.visibleRoots.map((root) => root.replace(/\/+$/, ''));
  const isVisible = (path: string): boolean => roots.some((root) => root !== '' && (path === root || path.startsWith(root + sep)));

  return (text: string): string => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    if (STACK_LINE.test(out)) out = redactStackLines(out);
    out = out.replace(FILE_URL, (match: string, path: string) => (isVisible(path) ? match : `file://${REDACTED_PATH}`));
    out = out.replace(ABSOLUTE_PATH, (path: string) => (isVisible(path) ? path : REDACTED_PATH));
    return out;
  };
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

// Node (`    at fn (/x/y.js:1:2)`, `    at /x/y.js:1:2`) and Python (`  File "/x.py", line 3, in f`) frames.
const STACK_LINE = /^[ \t]*(?:at .*(?::\d+:\d+\)?|\(native\)|<anonymous>\)?)|File "[^"\n]*", line \d+.*)[ \t]*$/m;
const STACK_LINE_GLOBAL = new RegExp(STACK_LINE.source, 'gm');

function redactStackLines(text: string): string {
  // A run of frames becomes one marker line, so the shape of the message survives.
  return text.replace(STACK_LINE_GLOBAL, REDACTED_STACK).replace(/(\[stack trace\]\r?\n)+(?=\[stack trace\])/g, '');
}

// An absolute path: a `/` not preceded by a word character, dot, colon or slash
// (so URLs like https://host/path and relative paths like ../a/b are left alone),
// then at least one path segment.
const ABSOLUTE_PATH = /(?<![\w.:/~\\-])\/[\w.@+,=%~-]+(?:\/[\w.@+,=%~-]+)*\/?/g;
const FILE_URL = /file:\/\/(\/[^\s"'<>`]*)/g;
