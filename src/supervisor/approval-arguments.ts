// The arguments of a call as a pending approval keeps them (SPEC section 7.2):
// redacted like a tool's output, and bounded in depth, members, string length
// and total size, so an operator reads what they approve and a hostile
// argument cannot fill the journal. The argument hash still names the exact
// arguments; what is cut says how much was left out.
import type { Redactor } from './redact.js';

/** Characters of one string kept (head and tail). */
const MAX_ARGUMENT_STRING_CHARS = 2000;
/** Members of one object or array kept. */
const MAX_ARGUMENT_MEMBERS = 50;
/** Nesting kept; deeper values are replaced by a marker. */
const MAX_ARGUMENT_DEPTH = 8;
/** Characters of all kept strings together (keys included). */
const MAX_ARGUMENTS_CHARS = 16_000;

/** A JSON value: the arguments redacted and bounded, cuts marked in the strings that replace what was left out. */
export function boundArguments(args: Readonly<Record<string, unknown>>, redact: Redactor): unknown {
  const budget = { chars: MAX_ARGUMENTS_CHARS };
  return boundValue(args, redact, 0, budget);
}

function boundValue(value: unknown, redact: Redactor, depth: number, budget: { chars: number }): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return boundString(value, redact, budget);
  if (typeof value !== 'object') return null;
  if (depth >= MAX_ARGUMENT_DEPTH) return `…[${Array.isArray(value) ? 'array' : 'object'} nested deeper than ${MAX_ARGUMENT_DEPTH} levels left out]…`;
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (const item of value.slice(0, MAX_ARGUMENT_MEMBERS)) {
      if (budget.chars <= 0) break;
      kept.push(boundValue(item, redact, depth + 1, budget));
    }
    if (kept.length < value.length) kept.push(`…[${value.length - kept.length} more items left out]…`);
    return kept;
  }
  // A null prototype keeps a "__proto__" key as data.
  const kept = Object.create(null) as Record<string, unknown>;
  const entries = Object.entries(value as Record<string, unknown>);
  let count = 0;
  for (const [key, member] of entries) {
    if (count >= MAX_ARGUMENT_MEMBERS || budget.chars <= 0) break;
    kept[boundString(key, redact, budget)] = boundValue(member, redact, depth + 1, budget);
    count++;
  }
  if (count < entries.length) kept['…'] = `…[${entries.length - count} more members left out]…`;
  return kept;
}

// Redacted first, then cut to its share: the head and the tail, with the bytes between counted.
function boundString(text: string, redact: Redactor, budget: { chars: number }): string {
  const redacted = redact(text);
  const room = Math.max(0, Math.min(MAX_ARGUMENT_STRING_CHARS, budget.chars));
  if (redacted.length <= room) {
    budget.chars -= redacted.length;
    return redacted;
  }
  const half = Math.floor(room / 2);
  const head = sliceWhole(redacted, 0, half);
  const tail = sliceWhole(redacted, redacted.length - half, redacted.length);
  const leftOut = Buffer.byteLength(redacted.slice(head.length, redacted.length - tail.length), 'utf8');
  budget.chars -= room;
  return `${head}…[${leftOut} bytes left out]…${tail}`;
}

// Neither end splits a surrogate pair.
function sliceWhole(text: string, start: number, end: number): string {
  let from = start;
  let to = end;
  if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from++;
  if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to--;
  return text.slice(from, Math.max(from, to));
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
