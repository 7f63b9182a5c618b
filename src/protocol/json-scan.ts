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
      readonly idText?: string;
      readonly topLevel: 'object' | 'array' | 'scalar';
    };

/** Checks JSON syntax, measures depth and finds duplicate keys without building the value. */
export function scanJson(text: string): JsonScan {
  return new Scanner(text).run();
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

interface Frame {
  readonly kind: 'object' | 'array';
  readonly keys?: Set<string>;
  readonly path: string;
  /** The key whose value is being read (objects only). */
  key?: string;
}

class Scanner {
  private pos = 0;
  private maxDepth = 0;
  private duplicateKey: string | undefined;
  private idText: string | undefined;

  constructor(private readonly text: string) {}

  run(): JsonScan {
    const text = this.text;
    const stack: Frame[] = [];
    this.skipSpace();
    const first = text.charCodeAt(this.pos);
    const topLevel = first === 0x7b ? 'object' : first === 0x5b ? 'array' : 'scalar';
    // State machine: expecting a value, then after it either `,` or a closer.
    let expectValue = true;
    for (;;) {
      this.skipSpace();
      if (expectValue) {
        const frame = stack.at(-1);
        const valueStart = this.pos;
        const code = text.charCodeAt(this.pos);
        if (code === 0x7b || code === 0x5b) {
          const kind = code === 0x7b ? 'object' : 'array';
          const path = frame ? `${frame.path}/${frame.kind === 'object' ? escapePointer(frame.key ?? '') : ''}` : '';
          this.pos++;
          stack.push(kind === 'object' ? { kind, keys: new Set(), path } : { kind, path });
          this.maxDepth = Math.max(this.maxDepth, stack.length);
          this.skipSpace();
          const close = kind === 'object' ? 0x7d : 0x5d;
          if (text.charCodeAt(this.pos) === close) {
            this.pos++;
            stack.pop();
            expectValue = false;
            if (stack.length === 0) break;
            continue;
          }
          if (kind === 'object' && !this.readKey(stack.at(-1)!)) return this.fail();
          continue;
        }
        if (!this.readScalar()) return this.fail();
        if (stack.length === 1 && frame?.kind === 'object' && frame.key === 'id') {
          const raw = text.slice(valueStart, this.pos);
          const c = raw.charCodeAt(0);
          if (c !== 0x74 && c !== 0x66) this.idText = raw; // not true/false
        }
        expectValue = false;
        if (stack.length === 0) break;
        continue;
      }
      const frame = stack.at(-1);
      if (!frame) break;
      const code = text.charCodeAt(this.pos);
      if (code === 0x2c) {
        this.pos++;
        if (frame.kind === 'object' && !this.readKey(frame)) return this.fail();
        expectValue = true;
        continue;
      }
      if ((frame.kind === 'object' && code === 0x7d) || (frame.kind === 'array' && code === 0x5d)) {
        this.pos++;
        stack.pop();
        if (stack.length === 0) break;
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
      ...(this.idText !== undefined ? { idText: this.idText } : {}),
    };
  }

  private fail(): JsonScan {
    return { ok: false, offset: this.pos };
  }

  /** Reads `"key" :` and records duplicates. */
  private readKey(frame: Frame): boolean {
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) !== QUOTE) return false;
    const start = this.pos;
    if (!this.readString()) return false;
    const raw = this.text.slice(start + 1, this.pos - 1);
    // Escapes make two spellings of one key ("a" and "\u0061"): compare decoded.
    const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
    if (frame.keys!.has(key)) this.duplicateKey ??= `${frame.path}/${escapePointer(key)}`;
    frame.keys!.add(key);
    frame.key = key;
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
