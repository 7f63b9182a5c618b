// Shaping a checked tool output (SPEC 5.1) into what the caller sees. In order:
// a host_only value that also shows in the model-visible parts fails closed;
// every part is redacted (text, URIs, names; a binary part holding a secret
// cannot be redacted and fails closed); the parts are fitted within the inline
// budget (budget.ts), `artifact` parts always stored and linked. A model_error
// becomes a `tool_error` error result carrying the parts; a host_only value
// goes to `_meta` only, and travels whole, so it may not be larger than the budget.
import { HostError } from '../../errors.js';
import { outputLimitDetails } from '../../registry/result-limits.js';
import { bytesHoldSecret, redactJson } from '../redact.js';
import type { ContentBlock } from '../types.js';
import { fitWithinBudget, storeSpills, type BudgetBlock } from './budget.js';
import { HOST_ONLY_META_KEY, type ToolOutput } from './envelope.js';
import { refuse, type OutputPart } from './envelope-parts.js';
import { findHostOnlyLeak } from './host-only-leak.js';
import { TEXT_MIME, type ShapeOptions, type StagedResult } from './staged.js';

/** Shapes a rich or host_only output; a model_error is thrown as its `tool_error` HostError. */
export async function shapeToolOutput(output: ToolOutput, options: ShapeOptions): Promise<StagedResult> {
  const { tool } = options;
  if (output.kind === 'host_only') {
    // Sized before the leak scan: the scan's work grows with the value.
    checkHostOnlySize(output.hostOnly, options);
    const leak = findHostOnlyLeak(output.hostOnly, output.parts);
    if (leak !== undefined) throw refuse(tool, 'host_only_leak', `part ${leak} shows the model the value meant for the application only`, { part: leak });
  }
  const blocks = output.parts.map((part, index) => budgetBlockOf(part, index, options));
  const content = await storeSpills(fitWithinBudget(blocks, options.inlineBudgetBytes), options.artifacts);
  if (output.kind === 'model_error') {
    throw new HostError('tool_error', `${tool} declined the request; its explanation follows.`, { modelError: true }, { content });
  }
  if (output.kind !== 'host_only') return withPayload(content, undefined);
  const hostOnly = redactJson(output.hostOnly, options.redact);
  checkHostOnlySize(hostOnly, options);
  const visible: readonly ContentBlock[] = content.length > 0 ? content : [{ type: 'text', text: `${tool} returned its result to the application only; it is not shown here.` }];
  return withPayload(visible, { [HOST_ONLY_META_KEY]: hostOnly });
}

function checkHostOnlySize(value: unknown, options: ShapeOptions): void {
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
  if (bytes <= options.inlineBudgetBytes) return;
  throw new HostError(
    'output_limit',
    `The host-only value of ${options.tool} is larger than the limit of ${options.inlineBudgetBytes} bytes.`,
    outputLimitDetails({ reason: 'host_only_too_large', bytes, limit: options.inlineBudgetBytes }),
  );
}

/** What the journal hashes: the content and the host-only value, serialized. */
function withPayload(content: readonly ContentBlock[], meta: Readonly<Record<string, unknown>> | undefined): StagedResult {
  const payload = JSON.stringify({ content, ...(meta ? { _meta: meta } : {}) });
  return { content, ...(meta ? { meta } : {}), payload, payloadBytes: Buffer.byteLength(payload, 'utf8') };
}

/** A part, redacted, as the budget sees it. */
function budgetBlockOf(part: OutputPart, index: number, options: ShapeOptions): BudgetBlock {
  const { redact, tool } = options;
  const binary = (bytes: Buffer): Buffer => {
    if (bytesHoldSecret(bytes, redact))
      throw refuse(tool, 'secret_in_binary', `part ${index} holds the value of a secret in binary data, which cannot be redacted`, { part: index });
    return bytes;
  };
  const spilled = { name: `${tool} part ${index + 1}`, what: `Part ${index + 1} of the result` };
  switch (part.type) {
    case 'text': {
      const text = redact(part.text);
      return { ...spilled, block: { type: 'text', text }, bytes: Buffer.byteLength(text, 'utf8'), body: () => Buffer.from(text, 'utf8'), mimeType: TEXT_MIME, previewText: text };
    }
    case 'image':
    case 'audio': {
      const bytes = binary(part.bytes);
      return { ...spilled, block: { type: part.type, data: part.data, mimeType: part.mimeType }, bytes: part.data.length, body: () => bytes, mimeType: part.mimeType };
    }
    case 'resource': {
      const uri = redact(part.uri);
      if ('text' in part) {
        const text = redact(part.text);
        const block: ContentBlock = { type: 'resource', resource: { uri, mimeType: part.mimeType, text } };
        return { ...spilled, block, bytes: Buffer.byteLength(text, 'utf8'), body: () => Buffer.from(text, 'utf8'), mimeType: part.mimeType };
      }
      const bytes = binary(part.bytes);
      return {
        ...spilled,
        block: { type: 'resource', resource: { uri, mimeType: part.mimeType, blob: part.blob } },
        bytes: part.blob.length,
        body: () => bytes,
        mimeType: part.mimeType,
      };
    }
    case 'artifact': {
      const name = part.name !== undefined ? redact(part.name) : `${tool} artifact ${index + 1}`;
      const body = 'text' in part ? Buffer.from(redact(part.text), 'utf8') : binary(part.bytes);
      // Never inline: the block is a placeholder the budget does not show.
      return { block: { type: 'text', text: '' }, bytes: 0, body: () => body, mimeType: part.mimeType, name, what: name, alwaysStore: { description: `An artifact of ${tool}` } };
    }
  }
}
