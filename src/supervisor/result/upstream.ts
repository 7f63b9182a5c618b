// An upstream server's CallToolResult (SPEC section 2.1): its content blocks
// are checked (known types only; base64 that decodes; a MIME type from the
// allowlist), redacted, and fitted within the inline budget (budget.ts).
// structuredContent is held to the result depth and the output schema
// (output-schema.ts), redacted, and dropped when the content had to be spilled.
// Any malformed part is `invalid_output`. Every word of the server's is
// redacted, link names and MIME types too; a URI that may not be shown is
// replaced by an opaque one of the host's (upstream-uri.ts), and binary data
// holding a secret's value is refused (it cannot be redacted).
import { HostError } from '../../errors.js';
import type { Manifest } from '../../registry/manifest.js';
import { outputLimitDetails } from '../../registry/result-limits.js';
import { bytesHoldSecret, redactJson, type Redactor } from '../redact.js';
import type { ContentBlock } from '../types.js';
import { shownUpstreamUri } from '../upstream-uri.js';
import { fitWithinBudget, storeSpills, utf8Bytes, type BudgetBlock } from './budget.js';
import { TERMINAL_META_KEY } from './envelope.js';
import { checkOutputSchema } from './output-schema.js';
import { isTooDeep } from './parse.js';
import { JSON_MIME, TEXT_MIME, type ShapeOptions, type StagedResult } from './staged.js';
import { MAX_RESULT_DEPTH } from './strict-json.js';
import { isRecord } from '../../config/guards.js';

interface UpstreamShapeOptions extends Omit<ShapeOptions, 'tool' | 'hasOutputSchema'> {
  /**
   * Records a resource_link the server returned, readable through resources/read: the URI
   * the caller is shown (maybe opaque) and the server's own.
   */
  readonly onResourceLink?: (shownUri: string, upstreamUri: string) => void;
}

/** At most this many content blocks are passed on. */
const MAX_UPSTREAM_BLOCKS = 256;

/** MIME types of image and audio blocks passed on (SPEC section 5.1's allowlist). */
const MEDIA_MIME_TYPES: Readonly<Record<'image' | 'audio', readonly string[]>> = {
  image: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'],
  audio: ['audio/wav', 'audio/x-wav', 'audio/mpeg', 'audio/ogg'],
};

/** Checks, redacts and fits an upstream result within the inline budget. */
export async function shapeUpstreamResult(result: Readonly<Record<string, unknown>>, manifest: Manifest, options: UpstreamShapeOptions): Promise<StagedResult> {
  const tool = manifest.name;
  const rawContent = result['content'] ?? [];
  if (!Array.isArray(rawContent)) throw invalid(tool, 'content_not_array', {});
  if (rawContent.length > MAX_UPSTREAM_BLOCKS) throw invalid(tool, 'too_many_blocks', { blocks: rawContent.length, limit: MAX_UPSTREAM_BLOCKS });

  const server = manifest.upstream?.server ?? tool;
  const checked = rawContent.map((raw, index) => checkBlock(raw, index, tool, server, options.redact));
  const fit = fitWithinBudget(
    checked.map((entry) => budgetBlockOf(entry.block, tool)),
    options.inlineBudgetBytes,
  );
  for (const [index, placement] of fit.placements.entries()) {
    const upstreamUri = checked[index]?.upstreamUri;
    if (placement.type === 'inline' && placement.block.type === 'resource_link' && upstreamUri !== undefined) options.onResourceLink?.(placement.block.uri, upstreamUri);
  }
  const content = await storeSpills(fit, options.artifacts);
  const payloadParts = checked.map(({ block }) => (block.type === 'text' ? block.text : JSON.stringify(block)));

  const structured = checkStructured(result['structuredContent'], manifest, options.redact);
  const structuredJson = structured === undefined ? undefined : JSON.stringify(structured);
  const keepStructured = structured !== undefined && !fit.spilled && Buffer.byteLength(structuredJson ?? '') <= options.inlineBudgetBytes;
  // A tool that declares an output schema must give structuredContent (MCP): the server broke that.
  if (manifest.output && structured === undefined && !result['isError']) throw invalid(tool, 'no_structured_content', {});
  if (manifest.output && !keepStructured) {
    // The tool advertises an output schema, so clients require structuredContent on success:
    // an output_limit error result with what fitted and the link(s) to the whole (SPEC 5 step 9).
    let errorContent: ContentBlock[] = content;
    let uri = content.find(
      (block): block is Extract<ContentBlock, { type: 'resource_link' }> => block.type === 'resource_link' && block.uri.startsWith('toolhost://artifacts/'),
    )?.uri;
    if (structuredJson !== undefined && (uri === undefined || !fit.spilled)) {
      const artifact = await options.artifacts.put(utf8Bytes(structuredJson), JSON_MIME);
      uri = artifact.uri;
      errorContent = [...content, { type: 'resource_link', uri: artifact.uri, name: `${tool} structuredContent`, mimeType: JSON_MIME, size: artifact.size }];
    }
    const bytes = Buffer.byteLength(structuredJson ?? payloadParts.join('\n'));
    throw new HostError(
      'output_limit',
      `The result of ${tool} is larger than the limit of ${options.inlineBudgetBytes} bytes; it is stored whole at the resource_link below.`,
      outputLimitDetails({ bytes, limit: options.inlineBudgetBytes, ...(uri !== undefined ? { uri } : {}) }),
      { content: errorContent },
    );
  }
  const payload = structuredJson ?? payloadParts.join('\n');
  return {
    content,
    ...(keepStructured ? { structuredContent: structured as Record<string, unknown> } : {}),
    payload,
    payloadBytes: Buffer.byteLength(payload),
    // A terminal tool's success carries the mark (SPEC 5.2), as staged results do.
    ...(manifest.terminal ? { meta: { [TERMINAL_META_KEY]: true } } : {}),
  };
}

type Block = ContentBlock & { readonly type: 'text' | 'image' | 'audio' | 'resource' | 'resource_link' };

/** Characters of a MIME type kept from a server. */
const MAX_MIME_TYPE_CHARS = 200;
/** Characters of a URI accepted from a server. */
const MAX_URI_CHARS = 4096;

interface CheckedBlock {
  readonly block: Block;
  /** A resource_link's URI as the server gave it (the block holds the one the caller is shown). */
  readonly upstreamUri?: string;
}

function checkBlock(raw: unknown, index: number, tool: string, server: string, redact: Redactor): CheckedBlock {
  if (!isRecord(raw)) throw invalid(tool, 'block_not_object', { index });
  const type = raw['type'];
  // Binary data cannot be redacted without corrupting it: one that holds a secret is refused.
  const binary = (base64: string): string => {
    if (bytesHoldSecret(Buffer.from(base64, 'base64'), redact)) throw invalid(tool, 'secret_in_binary', { index });
    return base64;
  };
  switch (type) {
    case 'text': {
      const text = raw['text'];
      if (typeof text !== 'string') throw invalid(tool, 'text_not_string', { index });
      return { block: { type: 'text', text: redact(text) } };
    }
    case 'image':
    case 'audio': {
      const { data, mimeType } = raw;
      if (typeof mimeType !== 'string' || !MEDIA_MIME_TYPES[type].includes(mimeType.toLowerCase()))
        throw invalid(tool, 'mime_type_not_allowed', { index, mimeType: redact(String(mimeType).slice(0, 100)) });
      if (typeof data !== 'string' || !isBase64(data)) throw invalid(tool, 'invalid_base64', { index });
      return { block: { type, data: binary(data), mimeType } };
    }
    case 'resource': {
      const resource = raw['resource'];
      if (!isRecord(resource) || typeof resource['uri'] !== 'string' || resource['uri'].length > MAX_URI_CHARS) throw invalid(tool, 'resource_without_uri', { index });
      const uri = shownUpstreamUri(resource['uri'], server, redact);
      const mimeType = typeof resource['mimeType'] === 'string' ? redact(resource['mimeType'].slice(0, MAX_MIME_TYPE_CHARS)) : undefined;
      if (typeof resource['text'] === 'string') return { block: { type: 'resource', resource: { uri, mimeType: mimeType ?? TEXT_MIME, text: redact(resource['text']) } } };
      if (typeof resource['blob'] === 'string' && isBase64(resource['blob']))
        return { block: { type: 'resource', resource: { uri, mimeType: mimeType ?? 'application/octet-stream', blob: binary(resource['blob']) } } };
      throw invalid(tool, 'resource_without_text_or_blob', { index });
    }
    case 'resource_link': {
      const { uri, name } = raw;
      if (typeof uri !== 'string' || typeof name !== 'string' || uri.length > MAX_URI_CHARS) throw invalid(tool, 'resource_link_malformed', { index });
      const mimeType = typeof raw['mimeType'] === 'string' ? redact(raw['mimeType'].slice(0, MAX_MIME_TYPE_CHARS)) : 'application/octet-stream';
      const description = typeof raw['description'] === 'string' ? { description: redact.cut(raw['description'], 2048) } : {};
      return { block: { type: 'resource_link', uri: shownUpstreamUri(uri, server, redact), name: redact.cut(name, 256), mimeType, ...description }, upstreamUri: uri };
    }
    default:
      throw invalid(tool, 'unknown_content_type', { index, type: redact(String(type).slice(0, 40)) });
  }
}

/** A checked block as the budget sees it: its cost is its payload's bytes, a spill stores it decoded. */
function budgetBlockOf(block: Block, tool: string): BudgetBlock {
  const spilled = { name: `${tool} ${block.type}`, what: `This ${block.type} block` };
  switch (block.type) {
    case 'text':
      return { ...spilled, block, bytes: Buffer.byteLength(block.text), body: () => utf8Bytes(block.text), mimeType: TEXT_MIME, previewText: block.text };
    case 'image':
    case 'audio':
      return { ...spilled, block, bytes: block.data.length, body: () => Buffer.from(block.data, 'base64'), mimeType: block.mimeType };
    case 'resource': {
      const { resource } = block;
      if ('text' in resource) return { ...spilled, block, bytes: Buffer.byteLength(resource.text), body: () => utf8Bytes(resource.text), mimeType: resource.mimeType };
      return { ...spilled, block, bytes: resource.blob.length, body: () => Buffer.from(resource.blob, 'base64'), mimeType: resource.mimeType };
    }
    case 'resource_link':
      return { ...spilled, block, bytes: Buffer.byteLength(block.uri) + Buffer.byteLength(block.name), body: () => utf8Bytes(JSON.stringify(block)), mimeType: JSON_MIME };
  }
}

function checkStructured(value: unknown, manifest: Manifest, redact: Redactor): unknown {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalid(manifest.name, 'structured_content_not_object', {});
  if (isTooDeep(value)) throw invalid(manifest.name, 'too_deep', { maxDepth: MAX_RESULT_DEPTH });
  checkOutputSchema(value, manifest);
  return redactJson(value, redact);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function isBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64.test(text);
}

function invalid(tool: string, reason: string, details: Record<string, unknown>): HostError {
  return new HostError('invalid_output', `The upstream result of ${tool} is malformed (${reason}).`, { reason, ...details });
}
