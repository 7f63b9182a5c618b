// The parts of a tool output (SPEC section 5.1), checked one by one: a known
// type with exactly its fields, a MIME type on the allowlist and fitting the
// part, base64 that decodes (strictly: the alphabet, the padding, the length),
// a URI that is a URI. Everything here comes from inside a sandbox and is
// refused with `invalid_output` naming the part, never repaired.
import { HostError } from '../../errors.js';

/** A part after its checks; binary data is decoded once, here. */
export type OutputPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image' | 'audio'; readonly mimeType: string; readonly data: string; readonly bytes: Buffer }
  | { readonly type: 'resource'; readonly uri: string; readonly mimeType: string; readonly text: string }
  | { readonly type: 'resource'; readonly uri: string; readonly mimeType: string; readonly blob: string; readonly bytes: Buffer }
  | { readonly type: 'artifact'; readonly mimeType: string; readonly name?: string; readonly text: string }
  | { readonly type: 'artifact'; readonly mimeType: string; readonly name?: string; readonly data: string; readonly bytes: Buffer };

/** Most parts one output may hold. */
export const MAX_OUTPUT_PARTS = 64;
/** Longest resource URI, in characters. */
const MAX_URI_CHARS = 2048;
/** Longest artifact name, in characters. */
const MAX_PART_NAME_CHARS = 256;

const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const AUDIO_TYPES: ReadonlySet<string> = new Set(['audio/wav', 'audio/mpeg', 'audio/ogg']);
const OTHER_TYPES: ReadonlySet<string> = new Set(['application/json', 'application/pdf']);
const TEXT_SUBTYPE = /^text\/[a-z0-9][a-z0-9.+-]{0,63}$/;

/** The fields each part type may have; any other field is refused (a typo must not pass silently). */
const FIELDS: Readonly<Record<string, readonly string[]>> = {
  text: ['type', 'text'],
  image: ['type', 'data', 'mimeType'],
  audio: ['type', 'data', 'mimeType'],
  resource: ['type', 'resource'],
  artifact: ['type', 'text', 'data', 'mimeType', 'name'],
};

/** Checks the `parts` array of an output envelope. */
export function checkParts(raw: unknown, tool: string): OutputPart[] {
  if (!Array.isArray(raw)) throw refuse(tool, 'bad_envelope', 'its parts are not an array');
  if (raw.length > MAX_OUTPUT_PARTS) throw refuse(tool, 'too_many_parts', `it has ${raw.length} parts, more than ${MAX_OUTPUT_PARTS}`, { maxParts: MAX_OUTPUT_PARTS });
  return raw.map((part, index) => checkPart(part, index, tool));
}

/**
 * A MIME type on the allowlist, normalized (lower case; a text type may carry
 * `charset=utf-8`, nothing else), or undefined.
 */
export function allowedMimeType(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 128) return undefined;
  const [essence = '', ...params] = value
    .toLowerCase()
    .split(';')
    .map((piece) => piece.trim());
  const textual = isTextualMime(essence);
  if (!textual && !IMAGE_TYPES.has(essence) && !AUDIO_TYPES.has(essence) && !OTHER_TYPES.has(essence)) return undefined;
  if (params.length === 0) return essence;
  if (textual && params.length === 1 && params[0]?.replace(/\s+/g, '') === 'charset=utf-8') return `${essence}; charset=utf-8`;
  return undefined;
}

/** text/* and application/json: types whose content is UTF-8 text. */
function isTextualMime(mimeType: string): boolean {
  const essence = mimeType.split(';')[0]?.trim() ?? '';
  return TEXT_SUBTYPE.test(essence) || essence === 'application/json';
}

/** Strict base64 (RFC 4648 alphabet, padding only at the end, length a multiple of 4), decoded; undefined when it is not. */
export function decodeBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0) return undefined;
  let padding = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x3d /* = */) {
      padding++;
      continue;
    }
    // A data character after padding, or more than two pads, is not base64.
    if (padding > 0 || !isBase64Char(code)) return undefined;
  }
  if (padding > 2) return undefined;
  const bytes = Buffer.from(text, 'base64');
  // Non-canonical trailing bits would decode to the same bytes as another string: refuse them too.
  return bytes.toString('base64') === text ? bytes : undefined;
}

function checkPart(raw: unknown, index: number, tool: string): OutputPart {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw refuse(tool, 'bad_part', `part ${index} is not an object`, { part: index });
  const part = raw as Record<string, unknown>;
  const type = part['type'];
  const fields = typeof type === 'string' && Object.hasOwn(FIELDS, type) ? FIELDS[type] : undefined;
  if (!fields) throw refuse(tool, 'unknown_part_type', `part ${index} has an unknown type`, { part: index });
  const extra = Object.keys(part).find((key) => !fields.includes(key));
  if (extra !== undefined) throw refuse(tool, 'bad_part', `part ${index} (${String(type)}) has an unknown field`, { part: index, field: extra.slice(0, 64) });
  switch (type) {
    case 'text':
      return { type: 'text', text: requireString(part['text'], index, 'text', tool) };
    case 'image':
    case 'audio': {
      const mimeType = mimeFor(part['mimeType'], index, tool, type === 'image' ? IMAGE_TYPES : AUDIO_TYPES);
      const data = requireString(part['data'], index, 'data', tool);
      return { type, mimeType, data, bytes: base64Of(data, index, tool) };
    }
    case 'resource':
      return checkResource(part['resource'], index, tool);
    default:
      return checkArtifact(part, index, tool);
  }
}

function checkResource(raw: unknown, index: number, tool: string): OutputPart {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw refuse(tool, 'bad_part', `part ${index} (resource) has no resource object`, { part: index });
  const resource = raw as Record<string, unknown>;
  const extra = Object.keys(resource).find((key) => !['uri', 'mimeType', 'text', 'blob'].includes(key));
  if (extra !== undefined) throw refuse(tool, 'bad_part', `part ${index} (resource) has an unknown field`, { part: index, field: extra.slice(0, 64) });
  const uri = requireString(resource['uri'], index, 'uri', tool);
  if (uri.length > MAX_URI_CHARS || !/^[a-z][a-z0-9+.-]{0,31}:[^\s\u0000-\u001f\u007f]+$/i.test(uri)) {
    throw refuse(tool, 'bad_part', `part ${index} (resource) has a uri that is not an absolute URI`, { part: index, field: 'uri' });
  }
  const mimeType = mimeFor(resource['mimeType'], index, tool);
  const { text, data } = oneBody(resource['text'], resource['blob'], index, 'resource', tool);
  if (text !== undefined) return { type: 'resource', uri, mimeType: textualOnly(mimeType, index, tool), text };
  return { type: 'resource', uri, mimeType, blob: data, bytes: base64Of(data, index, tool) };
}

function checkArtifact(part: Record<string, unknown>, index: number, tool: string): OutputPart {
  const mimeType = mimeFor(part['mimeType'], index, tool);
  const name = part['name'] === undefined ? undefined : requireString(part['name'], index, 'name', tool);
  if (name !== undefined && (name.length === 0 || name.length > MAX_PART_NAME_CHARS)) {
    throw refuse(tool, 'bad_part', `part ${index} (artifact) has a name that is empty or longer than ${MAX_PART_NAME_CHARS} characters`, { part: index, field: 'name' });
  }
  const named = name !== undefined ? { name } : {};
  const { text, data } = oneBody(part['text'], part['data'], index, 'artifact', tool);
  if (text !== undefined) return { type: 'artifact', mimeType: textualOnly(mimeType, index, tool), ...named, text };
  return { type: 'artifact', mimeType, ...named, data, bytes: base64Of(data, index, tool) };
}

/** Exactly one of a text body and a base64 body. */
function oneBody(text: unknown, data: unknown, index: number, type: string, tool: string): { text: string; data?: undefined } | { text?: undefined; data: string } {
  if ((text === undefined) === (data === undefined)) {
    throw refuse(tool, 'bad_part', `part ${index} (${type}) needs exactly one of text and ${type === 'resource' ? 'blob' : 'data'}`, { part: index });
  }
  if (text !== undefined) return { text: requireString(text, index, 'text', tool) };
  return { data: requireString(data, index, type === 'resource' ? 'blob' : 'data', tool) };
}

function mimeFor(value: unknown, index: number, tool: string, only?: ReadonlySet<string>): string {
  const mimeType = allowedMimeType(value);
  if (mimeType === undefined || (only && !only.has(mimeType))) {
    throw refuse(tool, 'mime_not_allowed', `part ${index} has a MIME type that is not allowed here`, {
      part: index,
      mimeType: typeof value === 'string' ? value.slice(0, 128) : null,
      ...(only ? { allowed: [...only] } : {}),
    });
  }
  return mimeType;
}

function textualOnly(mimeType: string, index: number, tool: string): string {
  if (isTextualMime(mimeType)) return mimeType;
  throw refuse(tool, 'mime_not_allowed', `part ${index} carries text under a MIME type that is not textual`, { part: index, mimeType });
}

function base64Of(data: string, index: number, tool: string): Buffer {
  const bytes = decodeBase64(data);
  if (bytes === undefined) throw refuse(tool, 'bad_base64', `part ${index} has data that is not valid base64`, { part: index });
  return bytes;
}

function requireString(value: unknown, index: number, field: string, tool: string): string {
  if (typeof value !== 'string') throw refuse(tool, 'bad_part', `part ${index} has a ${field} that is not a string`, { part: index, field });
  return value;
}

function isBase64Char(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2b || code === 0x2f;
}

/** `invalid_output`: the output of `tool` is refused, and why. */
export function refuse(tool: string, reason: string, why: string, details: Record<string, unknown> = {}): HostError {
  return new HostError('invalid_output', `The output of ${tool} was refused: ${why}.`, { reason, ...details });
}
