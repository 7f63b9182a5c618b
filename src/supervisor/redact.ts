// Redaction of everything a tool hands back to the model (SPEC section 5 step
// 9): values of secret environment variables (however the tool came by them),
// stack-trace lines, and host paths outside the workspace. Applied to result
// text, every string (and key) of a JSON result, error messages and details,
// progress and log messages. Text is redacted *before* it is cut to a length
// limit; text that was already cut (on the far side of a sandbox, to a
// generous bound) has a piece of a secret of 8 or more characters at either
// edge redacted too.
import { existsSync } from 'node:fs';
import { sep } from 'node:path';

export const REDACTED = '[redacted]';
export const REDACTED_PATH = '[path]';
export const REDACTED_STACK = '[stack trace]';

/** A piece of a secret this long, left at a cut edge, is redacted (SPEC section 5 step 9). */
const MIN_SECRET_PIECE_CHARS = 8;

interface RedactorOptions {
  /** Values never to show; empty strings are ignored. */
  readonly secretValues: readonly string[];
  /** Absolute folders whose paths may be shown (the workspace; the tool's roots). */
  readonly visibleRoots: readonly string[];
  /**
   * Host folders whose paths are hidden whether or not they exist: home, the state
   * folder, the manifest folders, the host's /tmp. Other absolute-looking text is
   * hidden only when it names something that exists on the host.
   */
  readonly hostRoots?: readonly string[];
  /** Whether a path exists on the host; default fs.existsSync (tests inject one). */
  readonly exists?: (path: string) => boolean;
  /** Milliseconds clock of the lookup window; default performance.now (tests inject one). */
  readonly now?: () => number;
}

export interface Redactor {
  /** Secrets, stack frames and host paths outside the workspace replaced. */
  (text: string): string;
  /**
   * Redacts `text` (a secret piece at either edge included, since it may have been
   * cut already), then cuts it to at most `maxChars`, keeping its head or its tail.
   */
  cut(text: string, maxChars: number, keep?: 'head' | 'tail'): string;
  /** Secret values only: for text whose slashes are not paths (JSON pointers). */
  secrets(text: string): string;
  /** True when an absolute path lies inside a folder whose paths may be shown (the workspace). */
  isVisiblePath?(path: string): boolean;
  /**
   * The values it replaces: binary parts cannot be redacted without corrupting them,
   * so they are checked against these.
   */
  readonly secretValues?: readonly string[];
}

/** Builds the text redactor for one host (secret values are fixed at startup). */
export function createRedactor(options: RedactorOptions): Redactor {
  // Longest first, so a secret that contains another is replaced whole.
  const secrets = [...new Set(options.secretValues.filter((value) => value.length > 0))].sort((a, b) => b.length - a.length);
  const trim = (root: string): string => root.replace(/\/+$/, '');
  const roots = options.visibleRoots.map(trim).filter((root) => root !== '');
  const hostRoots = (options.hostRoots ?? []).map(trim).filter((root) => root !== '');
  const exists = options.exists ?? existsSync;
  const isUnder = (path: string, root: string): boolean => path === root || path.startsWith(root + sep);
  const isVisible = (path: string): boolean => roots.some((root) => isUnder(path, root));
  // Looking a path up is a system call on the host's event loop, for text a tool controls:
  // answers are kept briefly, and past a number of lookups per second a path is hidden unseen.
  const lookups = new PathLookups(exists, options.now ?? (() => performance.now()));

  const redactSecrets = (text: string): string => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  const redact = (text: string): string => {
    let out = redactSecrets(text);
    out = redactStackLines(out);
    // Both path patterns below need a slash: most strings of a result (keys, words) have none.
    if (!out.includes('/')) return out;
    const isHostPath = (path: string): boolean => {
      if (isVisible(path)) return false;
      if (hostRoots.some((root) => isUnder(path, root))) return true;
      return lookups.exists(path.replace(/\/+$/, '') || '/');
    };
    out = out.replace(FILE_URL, (match: string, path: string) => (isVisible(path) ? match : `file://${REDACTED_PATH}`));
    out = out.replace(ABSOLUTE_PATH, (match: string) => {
      // Sentence punctuation after a path is not part of it: `cannot open /etc/passwd.`
      const path = match.replace(TRAILING_PUNCTUATION, '');
      return path !== '' && isHostPath(path) ? REDACTED_PATH + match.slice(path.length) : match;
    });
    return out;
  };
  const cut = (text: string, maxChars: number, keep: 'head' | 'tail' = 'head'): string => {
    const redacted = redactEdgePieces(redact(text), secrets);
    return cutChars(redacted, maxChars, keep);
  };
  return Object.assign(redact, { cut, secrets: redactSecrets, isVisiblePath: isVisible, secretValues: Object.freeze(secrets) });
}

/** True when `bytes` hold the value of a secret (as UTF-8), which redaction cannot cut out of binary data. */
export function bytesHoldSecret(bytes: Uint8Array, redact: Redactor): boolean {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return (redact.secretValues ?? []).some((secret) => buffer.includes(secret, 0, 'utf8'));
}

/** Applies `redact` to every string and key of a JSON value; returns a new value. */
export function redactJson(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, redact));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const redactedKey = redact(key);
      const item = redactJson((value as Record<string, unknown>)[key], redact);
      // defineProperty: a key named __proto__ stays an own data property (assignment would set the prototype).
      if (redactedKey === '__proto__') Object.defineProperty(out, redactedKey, { value: item, enumerable: true, writable: true, configurable: true });
      else out[redactedKey] = item;
    }
    return out;
  }
  return value;
}

/** At most `maxChars` characters of `text`, its head or its tail, never splitting a surrogate pair. */
export function cutChars(text: string, maxChars: number, keep: 'head' | 'tail' = 'head'): string {
  if (text.length <= maxChars) return text;
  if (keep === 'head') {
    let end = Math.max(0, maxChars);
    if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    return text.slice(0, end);
  }
  let start = text.length - Math.max(0, maxChars);
  if (start < text.length && isLowSurrogate(text.charCodeAt(start))) start++;
  return text.slice(start);
}

/**
 * A piece of a secret at an edge of `text`, as a cut leaves it: the secret's
 * head at the end, or its tail at the start. Pieces shorter than
 * MIN_SECRET_PIECE_CHARS stay (they say too little, and would match everywhere).
 */
function redactEdgePieces(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length <= MIN_SECRET_PIECE_CHARS) continue;
    const head = longestPieceAtEnd(out, secret);
    if (head > 0) out = out.slice(0, out.length - head) + REDACTED;
    const tail = longestPieceAtStart(out, secret);
    if (tail > 0) out = REDACTED + out.slice(tail);
  }
  return out;
}

// Length of the longest proper prefix of `secret` (at least the minimum) that `text` ends with; 0 if none.
function longestPieceAtEnd(text: string, secret: string): number {
  const longest = Math.min(secret.length - 1, text.length);
  for (let length = longest; length >= MIN_SECRET_PIECE_CHARS; length--) {
    // Cheap first-character test before the comparison keeps this near linear.
    if (text.charCodeAt(text.length - length) === secret.charCodeAt(0) && text.endsWith(secret.slice(0, length))) return length;
  }
  return 0;
}

// Length of the longest proper suffix of `secret` (at least the minimum) that `text` starts with; 0 if none.
function longestPieceAtStart(text: string, secret: string): number {
  const longest = Math.min(secret.length - 1, text.length);
  for (let length = longest; length >= MIN_SECRET_PIECE_CHARS; length--) {
    if (text.charCodeAt(length - 1) === secret.charCodeAt(secret.length - 1) && text.startsWith(secret.slice(secret.length - length))) return length;
  }
  return 0;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Paths looked up on the host per second and redactor; past it, a path is hidden without a look. */
export const MAX_PATH_LOOKUPS_PER_SECOND = 1024;
const LOOKUP_WINDOW_MS = 1000;

// Whether paths exist, answered from a cache that lives for one window (a path created
// since is seen in the next one) and from at most MAX_PATH_LOOKUPS_PER_SECOND lookups.
class PathLookups {
  private readonly answers = new Map<string, boolean>();
  private windowStartMs = Number.NEGATIVE_INFINITY;
  private lookedUp = 0;

  constructor(
    private readonly lookUp: (path: string) => boolean,
    private readonly now: () => number,
  ) {}

  exists(path: string): boolean {
    const now = this.now();
    if (now - this.windowStartMs >= LOOKUP_WINDOW_MS) {
      this.windowStartMs = now;
      this.lookedUp = 0;
      this.answers.clear();
    }
    const known = this.answers.get(path);
    if (known !== undefined) return known;
    if (this.lookedUp >= MAX_PATH_LOOKUPS_PER_SECOND) return true;
    this.lookedUp++;
    let found: boolean;
    try {
      found = this.lookUp(path);
    } catch {
      found = true;
    }
    this.answers.set(path, found);
    return found;
  }
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
const TRAILING_PUNCTUATION = /[.,]+$/;
const FILE_URL = /file:\/\/(\/[^\s"'<>`]*)/g;
