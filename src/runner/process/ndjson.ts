// The persistent-process wire: newline-delimited JSON envelopes.
//   in:  {"id","args"}
//   out: {"id","result"} | {"id","error":{"message"}} | {"id","progress":{progress,total,message}}
// A `result` is handed on as its raw JSON text (the supervisor checks depth and
// duplicate keys on the exact bytes), so nothing here walks a value recursively,
// together with its value from the one parse of the line (the supervisor uses it
// once the text passed, instead of parsing the text a second time).
import type { ProgressEvent } from '../run-types.js';
import { readProgress } from '../../../sandbox/shared/readers.mjs';
import { decodeUtf8Strict } from './output-cap.js';

/** One parsed line from a persistent tool. */
export type Envelope =
  /** `result` is JSON.parse(resultJson): the envelope has no duplicate key, so its `result` is that text's value. */
  | { readonly kind: 'result'; readonly id: string; readonly resultJson: string; readonly result: unknown }
  | { readonly kind: 'error'; readonly id: string; readonly message: string }
  | { readonly kind: 'progress'; readonly id: string; readonly progress: ProgressEvent }
  | { readonly kind: 'blank' }
  | { readonly kind: 'invalid'; readonly reason: InvalidLineReason };

type InvalidLineReason = 'invalid_utf8' | 'not_json' | 'not_an_envelope' | 'duplicate_envelope_key';

/**
 * Longest tool error message kept from an `error` envelope: generous, since the
 * supervisor redacts it first and cuts it to what the caller sees after.
 */
export const MAX_ERROR_MESSAGE_CHARS = 8192;

/** Splits a byte stream into lines, refusing any line longer than `maxLineBytes`. */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** Returns the complete lines in `chunk` (without the newline), or 'overflow'. */
  push(chunk: Buffer): Buffer[] | 'overflow' {
    const lines: Buffer[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(0x0a, start); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      if (this.pendingBytes + piece.length > this.maxLineBytes) return 'overflow';
      if (this.pendingBytes === 0) lines.push(piece);
      else {
        lines.push(Buffer.concat([...this.pending, piece]));
        this.pending = [];
        this.pendingBytes = 0;
      }
      start = newline + 1;
    }
    // Most chunks end with their last line: no empty rest kept, nothing allocated for it.
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxLineBytes) return 'overflow';
    }
    return lines;
  }
}

/** Encodes one request line for a persistent tool. */
export function encodeRequest(id: string, args: unknown): string {
  return `${JSON.stringify({ id, args })}\n`;
}

/** Parses one output line of a persistent tool. */
export function parseEnvelope(line: Buffer): Envelope {
  const text = decodeUtf8Strict(line);
  if (text === undefined) return { kind: 'invalid', reason: 'invalid_utf8' };
  if (text.trim() === '') return { kind: 'blank' };
  let parsed: unknown;
  try {
    // V8's JSON.parse is iterative: a 100,000-deep value does not overflow the stack.
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'invalid', reason: 'not_json' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { kind: 'invalid', reason: 'not_an_envelope' };
  }
  const members = splitTopLevelMembers(text);
  if (members === 'duplicate') return { kind: 'invalid', reason: 'duplicate_envelope_key' };
  const envelope = parsed as Record<string, unknown>;
  const id = envelope['id'];
  if (typeof id !== 'string' && typeof id !== 'number') return { kind: 'invalid', reason: 'not_an_envelope' };
  const idText = String(id);
  const resultJson = members.get('result');
  if (resultJson !== undefined) return { kind: 'result', id: idText, resultJson, result: envelope['result'] };
  if ('error' in envelope) return { kind: 'error', id: idText, message: readErrorMessage(envelope['error']) };
  const progress = readProgress(envelope['progress']);
  if (progress !== undefined) return { kind: 'progress', id: idText, progress };
  return { kind: 'invalid', reason: 'not_an_envelope' };
}

/**
 * Raw text of each top-level member of a JSON object that JSON.parse has
 * already accepted. Iterative: it only counts brackets outside strings, reading
 * char codes and jumping from quote to quote (it runs on every answer).
 */
export function splitTopLevelMembers(objectText: string): Map<string, string> | 'duplicate' {
  const members = new Map<string, string>();
  let index = skipWhitespace(objectText, objectText.indexOf('{') + 1);
  while (index < objectText.length && objectText.charCodeAt(index) !== CLOSE_BRACE) {
    const keyEnd = findStringEnd(objectText, index);
    const key = readKey(objectText, index, keyEnd);
    index = skipWhitespace(objectText, keyEnd);
    index = skipWhitespace(objectText, index + 1); // past ':'
    const valueStart = index;
    index = findValueEnd(objectText, index);
    if (members.has(key)) return 'duplicate';
    members.set(key, objectText.slice(valueStart, trimEndIndex(objectText, valueStart, index)));
    if (objectText.charCodeAt(index) === COMMA) index = skipWhitespace(objectText, index + 1);
  }
  return members;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

// The key of the string at [start, end): JSON.parse only when it has an escape ("\u0061" is "a").
function readKey(text: string, start: number, end: number): string {
  const raw = text.slice(start, end);
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

// Index of the ',' or '}' that ends the member value starting at `start`.
function findValueEnd(text: string, start: number): number {
  let depth = 0;
  let index = start;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = findStringEnd(text, index);
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (depth === 0) break;
      depth--;
    } else if (code === COMMA && depth === 0) break;
    index++;
  }
  return index;
}

// Index just past the closing quote of the string that opens at `start`: from
// quote to quote with indexOf (native), a quote after an odd run of backslashes
// being escaped. Each backslash is counted once, for the quote it precedes: linear.
function findStringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (quote - backslashes - 1 > start && text.charCodeAt(quote - backslashes - 1) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipWhitespace(text: string, start: number): number {
  let index = start;
  while (index < text.length && isJsonWhitespace(text.charCodeAt(index))) index++;
  return index;
}

function trimEndIndex(text: string, start: number, end: number): number {
  let index = end;
  while (index > start && isJsonWhitespace(text.charCodeAt(index - 1))) index--;
  return index;
}

function readErrorMessage(error: unknown): string {
  const message = typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string' ? error.message : 'The tool reported an error.';
  return message.length > MAX_ERROR_MESSAGE_CHARS ? message.slice(0, MAX_ERROR_MESSAGE_CHARS) : message;
}
