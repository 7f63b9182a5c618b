// Result shape (SPEC section 5 step 9, second half): redaction of everything
// the caller will see, then the MCP shape and the byte limit. An object
// becomes structuredContent plus a text block with its JSON; anything else a
// text block. A payload over maxResultBytes is stored whole as an artifact and
// the caller gets a preview cut on a character boundary and a resource_link;
// for a tool that advertises an outputSchema (whose successes must carry
// structuredContent) that answer is an `output_limit` error result instead.
import { HostError } from '../errors.js';
import type { ContentBlock } from './types.js';
import { redactJson, type Redactor } from './redact.js';
import type { CheckedResult } from './result-checks.js';

export interface ShapedResult {
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  /** The payload the limit was applied to (redacted), as stored or sent. */
  readonly payload: string;
  readonly payloadBytes: number;
  /** Set when the payload was spilled to an artifact. */
  readonly artifact?: { readonly sha256: string; readonly uri: string; readonly size: number };
  /**
   * Set when the answer is an error result (a spilled result of a tool with an
   * outputSchema): its `content` carries the preview and the resource_link.
   */
  readonly error?: HostError;
}

/** Where spilled payloads go; ArtifactStore from src/audit implements it. */
export interface ArtifactSink {
  put(bytes: Uint8Array, mimeType: string): { sha256: string; uri: string; size: number } | Promise<{ sha256: string; uri: string; size: number }>;
}

export interface ShapeOptions {
  readonly tool: string;
  readonly redact: Redactor;
  readonly maxResultBytes: number;
  readonly artifacts: ArtifactSink;
  /** The tool advertises an outputSchema: clients then require structuredContent on success. */
  readonly hasOutputSchema?: boolean;
}

export const JSON_MIME = 'application/json';
export const TEXT_MIME = 'text/plain; charset=utf-8';

/**
 * Redacts, shapes and applies the byte limit to a checked result. A result within the
 * limit (every call's case) is answered at once, with no promise; only a spill waits,
 * for the artifact store.
 */
export function shapeResult(checked: CheckedResult, options: ShapeOptions): ShapedResult | Promise<ShapedResult> {
  const { payload, mimeType, structured } = toPayload(checked, options.redact);
  const payloadBytes = Buffer.byteLength(payload, 'utf8');
  if (payloadBytes <= options.maxResultBytes) {
    return {
      content: [{ type: 'text', text: payload }],
      ...(structured ? { structuredContent: structured } : {}),
      payload,
      payloadBytes,
    };
  }
  return spill(payload, payloadBytes, mimeType, options);
}

/** A payload over the limit: stored whole as an artifact, a preview and a resource_link inline. */
async function spill(payload: string, payloadBytes: number, mimeType: string, options: ShapeOptions): Promise<ShapedResult> {
  const artifact = await options.artifacts.put(Buffer.from(payload, 'utf8'), mimeType);
  const preview = cutUtf8(payload, options.maxResultBytes);
  const content: ContentBlock[] = [
    { type: 'text', text: preview },
    {
      type: 'resource_link',
      uri: artifact.uri,
      name: `${options.tool} result`,
      mimeType,
      size: artifact.size,
      description: `The full result (${payloadBytes} bytes) is larger than the limit of ${options.maxResultBytes} bytes; the text above is its beginning.`,
    },
  ];
  // A success without structuredContent would make SDK clients throw (SPEC section 5 step 9).
  const error = options.hasOutputSchema
    ? new HostError(
        'output_limit',
        `The result (${payloadBytes} bytes) is larger than the limit of ${options.maxResultBytes} bytes; it is stored whole at the resource_link below.`,
        { bytes: payloadBytes, limit: options.maxResultBytes, uri: artifact.uri },
        { content },
      )
    : undefined;
  return { ...(error ? { error } : {}), content, payload, payloadBytes, artifact };
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.byteLength <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) to the start of the character that does not fit.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

function toPayload(checked: CheckedResult, redact: Redactor): { payload: string; mimeType: string; structured?: Record<string, unknown> } {
  if (checked.type === 'text') return { payload: redact(checked.text), mimeType: TEXT_MIME };
  const value = redactJson(checked.value, redact);
  // A JSON string is shown as its text; it is what a tool returning prose means.
  if (typeof value === 'string') return { payload: value, mimeType: TEXT_MIME };
  const payload = JSON.stringify(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return { payload, mimeType: JSON_MIME, structured: value as Record<string, unknown> };
  }
  return { payload, mimeType: JSON_MIME };
}
