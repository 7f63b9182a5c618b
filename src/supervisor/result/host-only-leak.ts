// The fail-closed check of a host_only output (SPEC 5.1): the value meant for
// the application must not also be in what the model sees. A part leaks when
// it holds the whole value (its JSON, or the string itself), or any string or
// number inside it that is long enough to be specific: shorter pieces ("ok",
// 42) would match ordinary prose. Text is compared as written and binary parts
// by their decoded bytes, before redaction (a leak is a leak, whatever
// redaction would later hide).
import type { OutputPart } from './envelope-parts.js';

/** Pieces shorter than this (in characters) are too common to count as a leak on their own. */
const MIN_LEAK_CHARS = 8;
/**
 * Most pieces taken from one host-only value (the first ones met, depth first). Each
 * piece is one byte search over every part, on the host's event loop: the parts are
 * bounded by the runner's output cap, this bounds how many times they are scanned.
 */
const MAX_LEAK_PIECES = 32;

/** The index of the first part that holds the host-only value (or a specific piece of it), or undefined. */
export function findHostOnlyLeak(hostOnly: unknown, parts: readonly OutputPart[]): number | undefined {
  const whole = typeof hostOnly === 'string' ? hostOnly : JSON.stringify(hostOnly);
  const needles = piecesOf(hostOnly).map((piece) => Buffer.from(piece, 'utf8'));
  if (whole.length >= MIN_LEAK_CHARS) needles.push(Buffer.from(whole, 'utf8'));
  for (const [index, part] of parts.entries()) {
    const haystacks = haystacksOf(part);
    // The whole value as a part's entire text is a leak however short it is.
    if (whole.trim() !== '' && haystacks.some((text) => typeof text === 'string' && text.trim() === whole.trim())) return index;
    for (const haystack of haystacks) {
      const bytes = typeof haystack === 'string' ? Buffer.from(haystack, 'utf8') : haystack;
      if (needles.some((needle) => bytes.includes(needle))) return index;
    }
  }
  return undefined;
}

function piecesOf(value: unknown): string[] {
  const pieces: string[] = [];
  const visit = (item: unknown): void => {
    if (pieces.length >= MAX_LEAK_PIECES) return;
    if (typeof item === 'string' && item.length >= MIN_LEAK_CHARS) pieces.push(item);
    else if (typeof item === 'number' && String(item).length >= MIN_LEAK_CHARS) pieces.push(String(item));
    else if (Array.isArray(item)) item.forEach(visit);
    else if (typeof item === 'object' && item !== null) Object.values(item).forEach(visit);
  };
  visit(value);
  return pieces;
}

// Text haystacks are strings (compared whole and searched); binary ones are decoded bytes.
function haystacksOf(part: OutputPart): Array<string | Buffer> {
  switch (part.type) {
    case 'text':
      return [part.text];
    case 'image':
    case 'audio':
      return [part.bytes];
    case 'resource':
      return 'text' in part ? [part.uri, part.text] : [part.uri, part.bytes];
    case 'artifact':
      return [...(part.name !== undefined ? [part.name] : []), 'text' in part ? part.text : part.bytes];
  }
}
