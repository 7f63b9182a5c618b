// A single-pass, iterative JSON checker for one inbound line (SPEC section 5
// step 1). JSON.parse accepts duplicate keys silently (last one wins) and
// walks any nesting depth, so both checks need the raw text. The scanner uses
// an explicit stack, never recursion: a 16 MiB line of `[` cannot overflow it.

/** What the scan found; `idText` is the raw top-level `"id"` value when it is a string, number or null. */
type JsonScan =
  | { readonly ok: false; readonly offset: number }
  | {
      readonly ok: true;
      /** Deepest nesting of objects and arrays; the top-level value counts as 1. */
      readonly maxDepth: number;
      /** The first key that repeats inside one object, as a JSON pointer-like path. */
      readonly duplicateKey?: string;
      /**
       * The first `__proto__` key, as a path: parsers that build plain objects drop it or
       * turn it into a prototype, so what runs would differ from what was sent.
       */
      readonly protoKey?: string;
      readonly idText?: string;
      readonly topLevel: 'object' | 'array' | 'scalar';
    };

/**
 * Checks JSON syntax, measures depth and finds duplicate keys without building
 * the value. Keys are tracked only down to `trackDepth` levels: past that the
 * line is refused for depth anyway, and a 16 MiB line of `[` must not cost a
 * frame object per level.
 */
export function scanJson(text: string, trackDepth = Number.POSITIVE_INFINITY): JsonScan {
  // Every line of a connection goes through here: one scanner, reset per line, so a
  // line costs no stack, frame or key-set allocation of its own. The scan is
  // synchronous and never re-entered, so sharing it is safe.
  const scanner = SCANNER.reset(text, trackDepth);
  try {
    return scanner.run();
  } finally {
    scanner.release();
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OBJECT = 1;
const ARRAY = 2;
/** Stack slots kept between lines; a deeper line grows the stack for itself only. */
const KEPT_DEPTH = 256;
/** Keys of an object are compared in a list up to this many, then in a Set. */
const LIST_KEYS = 16;

/** Key bookkeeping of one object within the tracked depth; reused by every object opened at its level. */
class ObjectFrame {
  /** The first LIST_KEYS keys; slots past `count` are stale (a count, not `length = 0`: truncating an array is a runtime call). */
  readonly list: string[] = [];
  count = 0;
  set: Set<string> | undefined;
  /** The key whose value is being read. */
  key: string | undefined;

  clear(): void {
    this.count = 0;
    this.set = undefined;
    this.key = undefined;
  }

  /** Records `key`; true when the object already had it. */
  add(key: string): boolean {
    this.key = key;
    if (this.set !== undefined) {
      if (this.set.has(key)) return true;
      this.set.add(key);
      return false;
    }
    const list = this.list;
    const count = this.count;
    for (let i = 0; i < count; i++) if (list[i] === key) return true;
    list[count] = key;
    this.count = count + 1;
    if (count + 1 > LIST_KEYS) this.set = new Set(list.slice(0, count + 1));
    return false;
  }
}

class Scanner {
  private text = '';
  private trackDepth = 0;
  private pos = 0;
  private maxDepth = 0;
  private duplicateKey: string | undefined;
  private protoKey: string | undefined;
  private idText: string | undefined;
  /** Kind of every open container, one byte per level. */
  private kinds = new Uint8Array(KEPT_DEPTH);
  private depth = 0;
  /** Whether the container at each level is an object within the tracked depth (its frame is live). */
  private readonly tracked: boolean[] = [];
  /** Object frames by level, reused across objects and lines. */
  private readonly frames: ObjectFrame[] = [];
  /** Where each tracked container sits in its parent: the parent's key, or `-` in an array. */
  private readonly labels: string[] = [];

  reset(text: string, trackDepth: number): this {
    this.text = text;
    this.trackDepth = trackDepth;
    this.pos = 0;
    this.maxDepth = 0;
    this.duplicateKey = undefined;
    this.protoKey = undefined;
    this.idText = undefined;
    this.depth = 0;
    return this;
  }

  /** Drops what the line left behind: its text, and a stack a hostile line grew. */
  release(): void {
    this.text = '';
    if (this.kinds.length > KEPT_DEPTH) this.kinds = new Uint8Array(KEPT_DEPTH);
    if (this.labels.length > KEPT_DEPTH) {
      this.labels.length = KEPT_DEPTH;
      this.tracked.length = KEPT_DEPTH;
      this.frames.length = KEPT_DEPTH;
    }
  }

  run(): JsonScan {
    const text = this.text;
    this.skipSpace();
    const first = text.charCodeAt(this.pos);
    const topLevel = first === 0x7b ? 'object' : first === 0x5b ? 'array' : 'scalar';
    // State machine: expecting a value, then after it either `,` or a closer.
    let expectValue = true;
    for (;;) {
      this.skipSpace();
      if (expectValue) {
        const valueStart = this.pos;
        const code = text.charCodeAt(this.pos);
        if (code === 0x7b || code === 0x5b) {
          this.pos++;
          this.open(code === 0x7b ? OBJECT : ARRAY);
          this.skipSpace();
          if (text.charCodeAt(this.pos) === (code === 0x7b ? 0x7d : 0x5d)) {
            this.pos++;
            this.depth--;
            expectValue = false;
            if (this.depth === 0) break;
            continue;
          }
          if (code === 0x7b && !this.readKey()) return this.fail();
          continue;
        }
        if (!this.readScalar()) return this.fail();
        if (this.depth === 1 && this.tracked[1] === true && this.frames[1]!.key === 'id') {
          const c = text.charCodeAt(valueStart);
          if (c !== 0x74 && c !== 0x66) this.idText = text.slice(valueStart, this.pos); // not true/false
        }
        expectValue = false;
        if (this.depth === 0) break;
        continue;
      }
      if (this.depth === 0) break;
      const kind = this.kinds[this.depth];
      const code = text.charCodeAt(this.pos);
      if (code === 0x2c) {
        this.pos++;
        if (kind === OBJECT && !this.readKey()) return this.fail();
        expectValue = true;
        continue;
      }
      if ((kind === OBJECT && code === 0x7d) || (kind === ARRAY && code === 0x5d)) {
        this.pos++;
        this.depth--;
        if (this.depth === 0) break;
        continue;
      }
      return this.fail();
    }
    this.skipSpace();
    if (this.pos !== text.length) return this.fail();
    // Optional fields set only when found (no spreads of temporary objects: this runs per line).
    const found: { ok: true; maxDepth: number; topLevel: typeof topLevel; duplicateKey?: string; protoKey?: string; idText?: string } = {
      ok: true,
      maxDepth: this.maxDepth,
      topLevel,
    };
    if (this.duplicateKey !== undefined) found.duplicateKey = this.duplicateKey;
    if (this.protoKey !== undefined) found.protoKey = this.protoKey;
    if (this.idText !== undefined) found.idText = this.idText;
    return found;
  }

  private open(kind: number): void {
    const depth = ++this.depth;
    if (depth >= this.kinds.length) {
      const grown = new Uint8Array(this.kinds.length * 2);
      grown.set(this.kinds);
      this.kinds = grown;
    }
    this.kinds[depth] = kind;
    if (depth > this.maxDepth) this.maxDepth = depth;
    if (depth > this.trackDepth) return;
    // The parent is within the tracked depth too, so an object parent has a live frame.
    this.labels[depth] = this.kinds[depth - 1] === OBJECT ? (this.frames[depth - 1]!.key ?? '') : '-';
    if (kind === OBJECT) {
      const frame = (this.frames[depth] ??= new ObjectFrame());
      frame.clear();
      this.tracked[depth] = true;
    } else {
      this.tracked[depth] = false;
    }
  }

  private fail(): JsonScan {
    return { ok: false, offset: this.pos };
  }

  /** A JSON-pointer-like path of `key` in the object at the current depth (array positions shown as `-`). */
  private pathOf(key: string): string {
    return `/${[...this.labels.slice(2, this.depth + 1), key].map(escapePointer).join('/')}`;
  }

  /** Reads `"key" :` and, within the tracked depth, records duplicates. */
  private readKey(): boolean {
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) !== QUOTE) return false;
    const start = this.pos;
    const escaped = this.readString();
    if (escaped === undefined) return false;
    if (this.depth <= this.trackDepth && this.tracked[this.depth] === true) {
      const frame = this.frames[this.depth]!;
      const raw = this.text.slice(start + 1, this.pos - 1);
      // Escapes make two spellings of one key ("a" and "\u0061"): compare decoded.
      const key = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
      if (frame.add(key)) this.duplicateKey ??= this.pathOf(key);
      if (key === '__proto__') this.protoKey ??= this.pathOf(key);
    }
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) !== 0x3a) return false;
    this.pos++;
    return true;
  }

  private readScalar(): boolean {
    const code = this.text.charCodeAt(this.pos);
    if (code === QUOTE) return this.readString() !== undefined;
    if (code === 0x74) return this.readLiteral('true');
    if (code === 0x66) return this.readLiteral('false');
    if (code === 0x6e) return this.readLiteral('null');
    return this.readNumber();
  }

  private readLiteral(word: string): boolean {
    if (!this.text.startsWith(word, this.pos)) return false;
    this.pos += word.length;
    return true;
  }

  /**
   * `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, the longest match at pos, by hand
   * (a regex exec allocated a match per number). A fraction or exponent without
   * digits is not taken: pos stays before it, and the caller fails there.
   */
  private readNumber(): boolean {
    const text = this.text;
    let j = this.pos;
    if (text.charCodeAt(j) === 0x2d) j++; // -
    const first = text.charCodeAt(j);
    if (first === 0x30) j++;
    else if (first >= 0x31 && first <= 0x39) j = skipDigits(text, j + 1);
    else return false;
    if (text.charCodeAt(j) === 0x2e && isDigit(text.charCodeAt(j + 1))) j = skipDigits(text, j + 2); // .
    const e = text.charCodeAt(j);
    if (e === 0x65 || e === 0x45) {
      let k = j + 1;
      const sign = text.charCodeAt(k);
      if (sign === 0x2b || sign === 0x2d) k++;
      if (isDigit(text.charCodeAt(k))) j = skipDigits(text, k + 1);
    }
    this.pos = j;
    return true;
  }

  /**
   * Reads a string starting at the opening quote in one pass (control characters
   * refused, escapes checked); leaves pos after the closing quote. Returns whether
   * it held an escape, or undefined when it is not a valid string.
   */
  private readString(): boolean | undefined {
    const text = this.text;
    const length = text.length;
    let escaped = false;
    for (let j = this.pos + 1; j < length; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) {
        this.pos = j + 1;
        return escaped;
      }
      if (c < 0x20) return undefined;
      if (c === BACKSLASH) {
        escaped = true;
        const next = text.charCodeAt(j + 1);
        if (next === 0x75) {
          if (!isHex(text.charCodeAt(j + 2)) || !isHex(text.charCodeAt(j + 3)) || !isHex(text.charCodeAt(j + 4)) || !isHex(text.charCodeAt(j + 5))) return undefined;
          j += 5;
        } else if (isEscapeLetter(next)) {
          j += 1;
        } else {
          return undefined;
        }
      }
    }
    return undefined;
  }

  private skipSpace(): void {
    const text = this.text;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.pos++;
    }
  }
}

const SCANNER = new Scanner();

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function skipDigits(text: string, from: number): number {
  let j = from;
  while (isDigit(text.charCodeAt(j))) j++;
  return j;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** " \ / b f n r t */
function isEscapeLetter(c: number): boolean {
  return c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
