// How the host may ask this client for an approval (SPEC section 6), decided
// per request from the era and the capabilities the client declared. The
// supervisor decides whether an answer approves; this file only carries it.
import type { ProtocolEra, Server } from '@modelcontextprotocol/server';
import type { ApprovalChannel, ElicitAnswer } from '../supervisor/types.js';
import { APPROVAL_INPUT_KEY, approvalSchema } from './results.js';
import type { CallRequestContext } from './call-context.js';

const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';

// The channels that carry nothing of the request: one object each, not one per call.
const NO_CHANNEL: ApprovalChannel = Object.freeze({ kind: 'none' });
const INPUT_REQUIRED: ApprovalChannel = Object.freeze({ kind: 'input_required' });

/** Legacy + elicitation declared: elicitation/create; modern + elicitation declared: input_required; else none. */
export function approvalChannelFor(era: ProtocolEra, server: Server, ctx: CallRequestContext, timeoutMs: number): ApprovalChannel {
  if (era === 'modern') {
    const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as keyof typeof ctx.mcpReq.envelope];
    return supportsFormElicitation(capabilities) ? INPUT_REQUIRED : NO_CHANNEL;
  }
  // Legacy capabilities are scoped to the connection's initialize.
  if (!supportsFormElicitation(server.getClientCapabilities())) return NO_CHANNEL;
  return {
    kind: 'elicitation',
    async elicit(prompt, signal): Promise<ElicitAnswer> {
      try {
        const result = await ctx.mcpReq.elicitInput({ mode: 'form', message: prompt.message, requestedSchema: approvalSchema() }, { signal, timeout: timeoutMs });
        return { action: result.action, ...(result.content !== undefined ? { content: result.content } : {}) };
      } catch (error) {
        // A timeout, a cancel, an error reply or an answer that fails the schema: the supervisor denies.
        return { error: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}

/** The answer a modern client sent back under `inputResponses.approve`, unparsed; undefined when absent. */
export function approvalAnswerFrom(inputResponses: unknown, droppedKeys: readonly string[] | undefined): ElicitAnswer | undefined {
  if (droppedKeys?.includes(APPROVAL_INPUT_KEY)) return { error: 'the approval answer was not an elicitation result' };
  if (typeof inputResponses !== 'object' || inputResponses === null) return undefined;
  if (!Object.hasOwn(inputResponses, APPROVAL_INPUT_KEY)) return undefined;
  const answer: unknown = (inputResponses as Record<string, unknown>)[APPROVAL_INPUT_KEY];
  if (typeof answer !== 'object' || answer === null) return { error: 'the approval answer was not an object' };
  const { action, content } = answer as Record<string, unknown>;
  if (typeof action !== 'string') return { error: 'the approval answer had no action' };
  return { action, ...(content !== undefined ? { content } : {}) };
}

/** An `elicitation` capability with form mode: `{}` (form by default) or one listing `form`. */
function supportsFormElicitation(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const elicitation: unknown = (capabilities as Record<string, unknown>)['elicitation'];
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  const modes = elicitation as Record<string, unknown>;
  return 'form' in modes || !('url' in modes);
}
