// A plain result (SPEC section 5 step 9, second half): redaction of everything
// the caller will see, then the MCP shape and the inline budget. An object
// becomes structuredContent plus a text block with its JSON; anything else a
// text block. A payload over the budget is spilled (budget.ts): stored whole,
// a preview and a resource_link inline, no structuredContent; for a tool that
// advertises an outputSchema (whose successes must carry structuredContent)
// that answer is an `output_limit` error result instead.
import { isRecord } from '../../config/guards.js';
import { HostError } from '../../errors.js';
import { outputLimitDetails } from '../../registry/result-limits.js';
import { redactJson, type Redactor } from '../redact.js';
import type { ContentBlock } from '../types.js';
import { fitWithinBudget, storeSpills, utf8Bytes, type BudgetFit } from './budget.js';
import type { CheckedResult } from './parse.js';
import { JSON_MIME, TEXT_MIME, type ShapeOptions, type StagedResult } from './staged.js';

/**
 * Redacts and shapes a parsed result within the inline budget; a spill waits for the
 * artifact store. A spilled result of a tool with an outputSchema is thrown as its
 * output_limit HostError.
 */
export async function shapePlain(checked: CheckedResult, options: ShapeOptions): Promise<StagedResult> {
  const { payload, mimeType, structured } = toPayload(checked, options.redact);
  const payloadBytes = Buffer.byteLength(payload, 'utf8');
  const fit = fitWithinBudget(
    [
      {
        block: { type: 'text', text: payload },
        bytes: payloadBytes,
        body: () => utf8Bytes(payload),
        mimeType,
        name: `${options.tool} result`,
        what: 'The result',
        previewText: payload,
      },
    ],
    options.inlineBudgetBytes,
  );
  if (fit.inline) return { content: fit.inline, ...(structured ? { structuredContent: structured } : {}), payload, payloadBytes };
  return spilled(fit, payload, payloadBytes, options);
}

async function spilled(fit: BudgetFit, payload: string, payloadBytes: number, options: ShapeOptions): Promise<StagedResult> {
  const content = await storeSpills(fit, options.artifacts);
  // A success without structuredContent would make SDK clients throw (SPEC section 5 step 9).
  if (options.hasOutputSchema) {
    const uri = content.find((block): block is Extract<ContentBlock, { type: 'resource_link' }> => block.type === 'resource_link')?.uri;
    throw new HostError(
      'output_limit',
      `The result (${payloadBytes} bytes) is larger than the limit of ${options.inlineBudgetBytes} bytes; it is stored whole at the resource_link below.`,
      outputLimitDetails({ bytes: payloadBytes, limit: options.inlineBudgetBytes, ...(uri !== undefined ? { uri } : {}) }),
      { content },
    );
  }
  return { content, payload, payloadBytes };
}

function toPayload(checked: CheckedResult, redact: Redactor): { payload: string; mimeType: string; structured?: Record<string, unknown> } {
  if (checked.type === 'text') return { payload: redact(checked.text), mimeType: TEXT_MIME };
  const value = redactJson(checked.value, redact);
  // A JSON string is shown as its text; it is what a tool returning prose means.
  if (typeof value === 'string') return { payload: value, mimeType: TEXT_MIME };
  const payload = JSON.stringify(value);
  if (isRecord(value)) return { payload, mimeType: JSON_MIME, structured: value };
  return { payload, mimeType: JSON_MIME };
}
