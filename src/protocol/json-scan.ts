// A single-pass, iterative JSON checker for one inbound line (SPEC section 5
// step 1). JSON.parse accepts duplicate keys silently (last one wins) and
// walks any nesting depth, so both checks need the raw text. The scanner uses
// an explicit stack, never recursion: a 16 MiB line of `[` cannot overflow it.

/** What the scan found; `idText` is the raw top-level `"id"` value when it is a string, number or null. */
export type JsonScan =
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
  return new Scanner(text, trackDepth).run();
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OBJECT = 1;
const ARRAY = 2;

/** Key bookkeeping of one object within the tracked depth. */
interface ObjectFrame {
  readonly keys: Set<string>;
  /** The key whose value is being read. */
  key?: string;
}

class Scanner {
  private pos = 0;
  private maxDepth = 0;
  private duplicateKey: string | undefined;
  private protoKey: string | undefined;
  private idText: string | undefined;
  /** Kind of every open container, one byte per level. */
  private kinds = new Uint8Array(256);
  private depth = 0;
  /** Object frames by level (undefined for arrays and for levels past trackDepth). */
  private readonly frames: (ObjectFrame | undefined)[] = [];
  /** Where each tracked container sits in its parent: the parent's key, or `-` in an array. */
  private readonly labels: string[] = [];

  constructor(
    private readonly text: string,
    private readonly trackDepth: number,
  ) {}

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
        if (this.depth === 1 && this.frames[1]?.key === 'id') {
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
    return {
      ok: true,
      maxDepth: this.maxDepth,
      topLevel,
      ...(this.duplicateKey !== undefined ? { duplicateKey: this.duplicateKey } : {}),
      ...(this.protoKey !== undefined ? { protoKey: this.protoKey } : {}),
      ...(this.idText !== undefined ? { idText: this.idText } : {}),
    };
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
    this.labels[depth] = this.kinds[depth - 1] === OBJECT ? (this.frames[depth - 1]?.key ?? '') : '-';
    this.frames[depth] = kind === OBJECT ? { keys: new Set() } : undefined;
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
    if (!this.readString()) return false;
    const frame = this.depth <= this.trackDepth ? this.frames[this.depth] : undefined;
    if (frame) {
      const raw = this.text.slice(start + 1, this.pos - 1);
      // Escapes make two spellings of one key ("a" and "\u0061"): compare decoded.
      const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
      if (frame.keys.has(key)) this.duplicateKey ??= this.pathOf(key);
      if (key === '__proto__') this.protoKey ??= this.pathOf(key);
      frame.keys.add(key);
      frame.key = key;
    }
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) !== 0x3a) return false;
    this.pos++;
    return true;
  }

  private readScalar(): boolean {
    const code = this.text.charCodeAt(this.pos);
    if (code === QUOTE) return this.readString();
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

  private readNumber(): boolean {
    const match = NUMBER.exec(this.text.slice(this.pos, this.pos + 400));
    if (!match || match[0].length === 0) return this.readLongNumber();
    // A number longer than the window is rare; rescan it without the cap.
    if (match[0].length >= 399) return this.readLongNumber();
    this.pos += match[0].length;
    return true;
  }

  private readLongNumber(): boolean {
    NUMBER_STICKY.lastIndex = this.pos;
    const match = NUMBER_STICKY.exec(this.text);
    if (!match || match[0].length === 0) return false;
    this.pos += match[0].length;
    return true;
  }

  /** Reads a string starting at the opening quote; leaves pos after the closing quote. */
  private readString(): boolean {
    const text = this.text;
    let i = this.pos + 1;
    for (;;) {
      const close = text.indexOf('"', i);
      if (close === -1) return false;
      // Check the segment for control characters and escapes.
      for (let j = i; j < close; j++) {
        const c = text.charCodeAt(j);
        if (c < 0x20) return false;
        if (c === BACKSLASH) {
          const next = text.charCodeAt(j + 1);
          if (next === 0x75) {
            if (!HEX4.test(text.slice(j + 2, j + 6))) return false;
            j += 5;
          } else if (ESCAPES.has(next)) {
            j += 1;
          } else {
            return false;
          }
        }
      }
      // The escape loop may have stepped over the quote (`\"`): then look further.
      if (isEscaped(text, close)) {
        i = close + 1;
        continue;
      }
      this.pos = close + 1;
      return true;
    }
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

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;
const NUMBER_STICKY = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;
// " \ / b f n r t
const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/** True when the quote at `index` is preceded by an odd number of backslashes. */
function isEscaped(text: string, index: number): boolean {
  let count = 0;
  for (let i = index - 1; i >= 0 && text.charCodeAt(i) === BACKSLASH; i--) count++;
  return count % 2 === 1;
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
