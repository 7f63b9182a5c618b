// Stage 12 of a call: a supervisor outcome becomes what the client sees, a
// CallToolResult (isError for refusals and tool failures), an input_required
// result, or a JSON-RPC error for protocol faults (SPEC section 5).
import { inputRequired, ProtocolError, type CallToolResult, type InputRequiredResult } from '@modelcontextprotocol/server';
import { ERRORS, errorData, isInternalResult, type ErrorInfo, type HostError } from '../errors.js';
import type { SessionPolicy } from '../policy/types.js';
import type { CallOutcome } from '../supervisor/types.js';
import { JSONRPC_INTERNAL_ERROR, JSONRPC_INVALID_PARAMS, JSONRPC_INVALID_REQUEST } from './jsonrpc-codes.js';

/** `_meta` key of an error result: `{code, ...details}`. */
export const ERROR_META_KEY = 'toolhost/error';

/** The schema a client fills in to answer an approval (SPEC section 6). */
export function approvalSchema(): { type: 'object'; properties: { approve: { type: 'boolean'; title: string } }; required: string[] } {
  return { type: 'object', properties: { approve: { type: 'boolean', title: 'Approve this call' } }, required: ['approve'] };
}

/** The key of the approval question in an input_required result and in the retry's inputResponses. */
export const APPROVAL_INPUT_KEY = 'approve';

/** Maps one outcome to the handler's return value; a JSON-RPC error is thrown as a ProtocolError. */
export function renderOutcome(outcome: CallOutcome, session: Pick<SessionPolicy, 'onUnknownTool' | 'onInvalidArguments'>): CallToolResult | InputRequiredResult {
  switch (outcome.kind) {
    case 'result':
      return {
        content: outcome.content.map((block) => ({ ...block })) as CallToolResult['content'],
        ...(outcome.structuredContent !== undefined ? { structuredContent: { ...outcome.structuredContent } } : {}),
        ...(outcome.meta !== undefined ? { _meta: { ...outcome.meta } } : {}),
      };
    case 'input_required':
      return inputRequired({
        inputRequests: {
          [APPROVAL_INPUT_KEY]: inputRequired.elicit({ mode: 'form', message: outcome.message, requestedSchema: approvalSchema() }),
        },
        requestState: outcome.requestState,
      });
    case 'error': {
      const fault = toProtocolError(outcome.error, session);
      if (fault) throw fault;
      return renderErrorResult(outcome.error);
    }
  }
}

/**
 * An error as a tool result: isError, a first text block `code: <code>` (then a
 * model_error's own parts), the facts and the recovery in `_meta`, no structuredContent.
 */
export function renderErrorResult(error: HostError): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `code: ${error.code}\n${error.message}` }, ...(error.content.map((block) => ({ ...block })) as CallToolResult['content'])],
    _meta: { [ERROR_META_KEY]: { code: error.code, ...error.details, recovery: error.recovery } },
  };
}

/** The JSON-RPC error for an outcome that is a protocol fault, or undefined when it is a tool result. */
function toProtocolError(error: HostError, session: Pick<SessionPolicy, 'onUnknownTool' | 'onInvalidArguments'>): ProtocolError | undefined {
  const data = errorData(error.code, error.details, error.recovery);
  switch (error.code) {
    case 'malformed_request':
      return new ProtocolError(JSONRPC_INVALID_REQUEST, error.message, data);
    case 'internal':
      // A known cause (the journal cannot be written before the tool runs) is a result the caller can read.
      return isInternalResult(error) ? undefined : new ProtocolError(JSONRPC_INTERNAL_ERROR, error.message, data);
    case 'unknown_tool':
      // `rewrite` only reaches here when the rewrite target is missing too: answer as the default does.
      return session.onUnknownTool === 'error_result' ? undefined : new ProtocolError(JSONRPC_INVALID_PARAMS, error.message, data);
    case 'invalid_arguments':
      return session.onInvalidArguments === 'protocol_error' ? new ProtocolError(JSONRPC_INVALID_PARAMS, error.message, data) : undefined;
    default:
      // Every other code is a tool result by the ERRORS table; the table is the source of truth.
      return (ERRORS[error.code] as ErrorInfo).surface === 'jsonrpc' ? new ProtocolError(JSONRPC_INTERNAL_ERROR, error.message, data) : undefined;
  }
}
