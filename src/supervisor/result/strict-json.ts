// A strict JSON checker for tool output (SPEC section 5 step 9): grammar,
// nesting depth, duplicate object keys and well-formed Unicode. It is a loop
// over an explicit stack, not recursion, so a hostile 100,000-deep document is
// refused at depth 257 instead of overflowing the host's stack. Only text that
// passes is handed to JSON.parse.

/** Why a document was refused; `offset` is the UTF-16 index where it was noticed. */
type StrictJsonProblem = {
  readonly reason: 'not_json' | 'too_deep' | 'duplicate_key' | 'invalid_unicode';
  readonly offset: number;
  /** The duplicated key, for `duplicate_key`. */
  readonly key?: string;
};

type StrictJsonResult = { readonly ok: true; readonly value: unknown } | ({ readonly ok: false } & StrictJsonProblem);

/** Default nesting limit of tool results: SPEC section 5 step 9. */
export const MAX_RESULT_DEPTH = 256;

/**
 * Checks `text` and parses it when it is one strict JSON value. `parsed` is
 * JSON.parse(text) when the caller already has it (a persistent process's line
 * was parsed whole): the checks are the same, the text is just not parsed twice.
 */
export function parseStrictJson(text: string, maxDepth: number = MAX_RESULT_DEPTH, parsed?: unknown): StrictJsonResult {
  const problem = scanJson(text, maxDepth);
  if (problem) return { ok: false, ...problem };
  // Safe: the scan bounded the depth, and JSON.parse defines `__proto__` as an own key.
  // No JSON text parses to undefined, so undefined means "not parsed yet".
  return { ok: true, value: parsed !== undefined ? parsed : (JSON.parse(text) as unknown) };
}

/** Grammar, depth, duplicate keys and lone surrogates; undefined when the text is fine. */
export function scanJson(text: string, maxDepth: number = MAX_RESULT_DEPTH): StrictJsonProblem | undefined {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const stack: (Set<string> | null)[] = [];
  let expect: 'value' | 'valueOrClose' | 'key' | 'keyOrClose' | 'commaOrClose' | 'end' = 'value';
  let i = 0;
  const n = text.length;
  const fail = (reason: StrictJsonProblem['reason'], key?: string): StrictJsonProblem => (key === undefined ? { reason, offset: i } : { reason, offset: i, key });

  for (;;) {
    while (i < n && isWhitespace(text.charCodeAt(i))) i++;
    if (expect === 'end') return i === n ? undefined : fail('not_json');
    if (i >= n) return fail('not_json');
    const c = text.charCodeAt(i);

    if (expect === 'commaOrClose') {
      const top = stack[stack.length - 1];
      if (c === 0x2c /* , */) {
        i++;
        expect = top ? 'key' : 'value';
      } else if ((top && c === 0x7d) /* } */ || (top === null && c === 0x5d) /* ] */) {
        i++;
        stack.pop();
        expect = stack.length === 0 ? 'end' : 'commaOrClose';
      } else {
        return fail('not_json');
      }
      continue;
    }

    if (expect === 'key' || expect === 'keyOrClose') {
      if (expect === 'keyOrClose' && c === 0x7d) {
        i++;
        stack.pop();
        expect = stack.length === 0 ? 'end' : 'commaOrClose';
        continue;
      }
      if (c !== 0x22) return fail('not_json');
      const start = i;
      const end = scanString(text, i);
      if (end < 0) return { reason: end === -2 ? 'invalid_unicode' : 'not_json', offset: start };
      const key = decodeKey(text, start, end);
      const keys = stack[stack.length - 1];
      if (keys?.has(key)) return fail('duplicate_key', key);
      keys?.add(key);
      i = end;
      while (i < n && isWhitespace(text.charCodeAt(i))) i++;
      if (text.charCodeAt(i) !== 0x3a /* : */) return fail('not_json');
      i++;
      expect = 'value';
      continue;
    }

    // expect is 'value' or 'valueOrClose'
    if (expect === 'valueOrClose' && c === 0x5d) {
      i++;
      stack.pop();
      expect = stack.length === 0 ? 'end' : 'commaOrClose';
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= maxDepth) return fail('too_deep');
      stack.push(c === 0x7b ? new Set<string>() : null);
      i++;
      expect = c === 0x7b ? 'keyOrClose' : 'valueOrClose';
      continue;
    }
    let end: number;
    if (c === 0x22) {
      end = scanString(text, i);
      if (end < 0) return { reason: end === -2 ? 'invalid_unicode' : 'not_json', offset: i };
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      end = scanNumber(text, i);
    } else {
      end = scanLiteral(text, i);
    }
    if (end < 0) return fail('not_json');
    i = end;
    expect = stack.length === 0 ? 'end' : 'commaOrClose';
  }
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** Index after the closing quote; -1 for bad grammar, -2 for a lone surrogate. */
function scanString(text: string, start: number): number {
  const n = text.length;
  let i = start + 1;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -1;
    if (c === 0x5c /* \ */) {
      const e = text.charCodeAt(i + 1);
      if (e === 0x75 /* u */) {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return -1;
        i += 6;
      } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
        i += 2;
      } else {
        return -1;
      }
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return -2;
      i += 2;
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return -2;
    i++;
  }
  return -1;
}

// Keys are compared decoded: "a" and "\u0061" are the same key.
function decodeKey(text: string, start: number, end: number): string {
  const raw = text.slice(start, end);
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

function scanNumber(text: string, start: number): number {
  NUMBER.lastIndex = start;
  return NUMBER.test(text) ? NUMBER.lastIndex : -1;
}

function scanLiteral(text: string, start: number): number {
  for (const literal of ['true', 'false', 'null']) {
    if (text.startsWith(literal, start)) return start + literal.length;
  }
  return -1;
}
