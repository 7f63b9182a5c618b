// Shaping a checked tool output (SPEC 5.1) into what the caller sees. In order:
// a host_only value that also shows in the model-visible parts fails closed;
// every part is redacted (text, URIs, names; a binary part holding a secret
// cannot be redacted and fails closed); parts are placed in order against one
// budget of maxResultBytes, and a part that does not fit is stored as an
// artifact and linked in its place; `artifact` parts are always stored and
// linked. A model_error becomes a `tool_error` error result carrying the parts;
// a host_only value goes to `_meta` only.
import { HostError } from '../errors.js';
import { findHostOnlyLeak } from './host-only-leak.js';
import { refuse, type OutputPart } from './output-parts.js';
import { bytesHoldSecret, redactJson, type Redactor } from './redact.js';
import type { ArtifactSink } from './result-shape.js';
import { HOST_ONLY_META_KEY, type ToolOutput } from './tool-output.js';
import type { ContentBlock } from './types.js';

export interface OutputShapeOptions {
  readonly tool: string;
  readonly redact: Redactor;
  readonly maxResultBytes: number;
  readonly artifacts: ArtifactSink;
}

export interface ShapedOutput {
  readonly content: readonly ContentBlock[];
  readonly meta?: Readonly<Record<string, unknown>>;
  /** What the journal hashes: the content and the host-only value, serialized. */
  readonly payload: string;
  readonly payloadBytes: number;
}

/** Shapes a rich or host_only output; a model_error is thrown as its `tool_error` HostError. */
export async function shapeToolOutput(output: ToolOutput, options: OutputShapeOptions): Promise<ShapedOutput> {
  const { tool } = options;
  if (output.kind === 'host_only') {
    // Sized before the leak scan: the scan's work grows with the value.
    checkHostOnlySize(output.hostOnly, options);
    const leak = findHostOnlyLeak(output.hostOnly, output.parts);
    if (leak !== undefined) throw refuse(tool, 'host_only_leak', `part ${leak} shows the model the value meant for the application only`, { part: leak });
  }
  const content = await placeParts(output.parts, options);
  if (output.kind === 'model_error') {
    throw new HostError('tool_error', `${tool} declined the request; its explanation follows.`, { modelError: true }, { content });
  }
  if (output.kind !== 'host_only') return withPayload(content, undefined);
  const hostOnly = redactJson(output.hostOnly, options.redact);
  checkHostOnlySize(hostOnly, options);
  const visible: readonly ContentBlock[] = content.length > 0 ? content : [{ type: 'text', text: `${tool} returned its result to the application only; it is not shown here.` }];
  return withPayload(visible, { [HOST_ONLY_META_KEY]: hostOnly });
}

/** A host-only value travels whole in `_meta`: it may not be larger than the result limit. */
function checkHostOnlySize(value: unknown, options: OutputShapeOptions): void {
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
  if (bytes <= options.maxResultBytes) return;
  throw new HostError('output_limit', `The host-only value of ${options.tool} is larger than the limit of ${options.maxResultBytes} bytes.`, {
    reason: 'host_only_too_large',
    bytes,
    limit: options.maxResultBytes,
  });
}

function withPayload(content: readonly ContentBlock[], meta: Readonly<Record<string, unknown>> | undefined): ShapedOutput {
  const payload = JSON.stringify({ content, ...(meta ? { _meta: meta } : {}) });
  return { content, ...(meta ? { meta } : {}), payload, payloadBytes: Buffer.byteLength(payload, 'utf8') };
}

// One budget for every inline part, in order; a part that does not fit is spilled and
// the parts after it still get their chance (a large part early does not hide small ones).
async function placeParts(parts: readonly OutputPart[], options: OutputShapeOptions): Promise<ContentBlock[]> {
  let remainingBytes = options.maxResultBytes;
  const placed: ContentBlock[] = [];
  for (const [index, part] of parts.entries()) {
    const redacted = redactPart(part, index, options);
    if (redacted.type === 'artifact') {
      placed.push(await storeAndLink(redacted.body, redacted.mimeType, redacted.name ?? `${options.tool} artifact ${index + 1}`, `An artifact of ${options.tool}`, options));
      continue;
    }
    const bytes = Buffer.byteLength(JSON.stringify(redacted.block), 'utf8');
    if (bytes <= remainingBytes) {
      remainingBytes -= bytes;
      placed.push(redacted.block);
      continue;
    }
    const why = `Part ${index + 1} of the result (${bytes} bytes) did not fit in the limit of ${options.maxResultBytes} bytes; read it whole here.`;
    placed.push(await storeAndLink(redacted.body, redacted.mimeType, `${options.tool} part ${index + 1}`, why, options));
  }
  return placed;
}

type RedactedPart =
  /** Shown inline if it fits; `body` and `mimeType` are what a spill stores. */
  | { readonly type: 'inline'; readonly block: ContentBlock; readonly body: Buffer; readonly mimeType: string }
  | { readonly type: 'artifact'; readonly body: Buffer; readonly mimeType: string; readonly name?: string };

const TEXT_MIME = 'text/plain; charset=utf-8';

function redactPart(part: OutputPart, index: number, options: OutputShapeOptions): RedactedPart {
  const { redact } = options;
  const binary = (bytes: Buffer): Buffer => {
    if (bytesHoldSecret(bytes, redact)) throw refuse(options.tool, 'secret_in_binary', `part ${index} holds the value of a secret in binary data, which cannot be redacted`, { part: index });
    return bytes;
  };
  switch (part.type) {
    case 'text': {
      const text = redact(part.text);
      return { type: 'inline', block: { type: 'text', text }, body: Buffer.from(text, 'utf8'), mimeType: TEXT_MIME };
    }
    case 'image':
    case 'audio':
      return { type: 'inline', block: { type: part.type, data: part.data, mimeType: part.mimeType }, body: binary(part.bytes), mimeType: part.mimeType };
    case 'resource': {
      const uri = redact(part.uri);
      if ('text' in part) {
        const text = redact(part.text);
        return { type: 'inline', block: { type: 'resource', resource: { uri, mimeType: part.mimeType, text } }, body: Buffer.from(text, 'utf8'), mimeType: part.mimeType };
      }
      return { type: 'inline', block: { type: 'resource', resource: { uri, mimeType: part.mimeType, blob: part.blob } }, body: binary(part.bytes), mimeType: part.mimeType };
    }
    case 'artifact': {
      const name = part.name !== undefined ? { name: redact(part.name) } : {};
      const body = 'text' in part ? Buffer.from(redact(part.text), 'utf8') : binary(part.bytes);
      return { type: 'artifact', body, mimeType: part.mimeType, ...name };
    }
  }
}

async function storeAndLink(body: Buffer, mimeType: string, name: string, description: string, options: OutputShapeOptions): Promise<ContentBlock> {
  const stored = await options.artifacts.put(new Uint8Array(body.buffer, body.byteOffset, body.byteLength), mimeType);
  return { type: 'resource_link', uri: stored.uri, name, mimeType, size: stored.size, description };
}
