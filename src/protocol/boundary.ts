// Stage 1 of a call (SPEC section 5 step 1): the checks that need the raw
// line, before the SDK parses anything. A line that fails is answered here,
// with the request's id whenever it can be recovered, so a client is never
// left waiting on a request the SDK would have dropped (including a request
// that is JSON-RPC but that the SDK's own message schemas refuse).
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { scanJson } from './json-scan.js';
import { sdkRefusal } from './sdk-dispatch.js';
import { errorData } from '../errors.js';
import { isRecord } from '../config/guards.js';
import { ID_SCAN_BYTES, MAX_MESSAGE_DEPTH } from './message-limits.js';
import { parseIdText, recoverIdFromPrefix } from './line-id.js';
import { isRequestId } from './request-id.js';
import { JSONRPC_INVALID_REQUEST, JSONRPC_PARSE_ERROR } from './jsonrpc-codes.js';

export { DEFAULT_MAX_MESSAGE_BYTES, ID_SCAN_BYTES, MAX_MESSAGE_DEPTH } from './message-limits.js';
export { recoverIdFromPrefix } from './line-id.js';

/** Why a line was refused; `data.reason` on the wire. */
type MalformedReason =
  'too_large' | 'invalid_utf8' | 'invalid_json' | 'duplicate_key' | 'proto_key' | 'too_deep' | 'batch_not_supported' | 'not_jsonrpc' | 'not_mcp_message' | 'arguments_not_object';

type RequestId = string | number | null;

/** The JSON-RPC error response for a refused line. */
export interface MalformedResponse {
  readonly jsonrpc: '2.0';
  readonly id: RequestId;
  readonly error: {
    readonly code: typeof JSONRPC_PARSE_ERROR | typeof JSONRPC_INVALID_REQUEST;
    readonly message: string;
    readonly data: { readonly code: 'malformed_request'; readonly reason: MalformedReason } & Record<string, unknown>;
  };
}

type LineCheck =
  | { readonly ok: true; readonly message: JSONRPCMessage }
  | {
      readonly ok: false;
      readonly response: MalformedResponse;
      /**
       * Set when the refused line is a notification the SDK would drop: JSON-RPC
       * forbids answering it, so stdio only logs it (over HTTP the POST still gets
       * its 400 with this response). Its method, for the log.
       */
      readonly notification?: { readonly method: string };
    };

type Refusal = Extract<LineCheck, { readonly ok: false }>;

/** Checks one complete line (without its newline) and parses it, or builds the error answer. */
export function checkLine(bytes: Uint8Array, maxMessageBytes: number): LineCheck {
  if (bytes.byteLength > maxMessageBytes) return refuseOversized(bytes.subarray(0, ID_SCAN_BYTES), maxMessageBytes);
  let text: string;
  let isUtf8 = true;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    isUtf8 = false;
    text = LOSSY_UTF8.decode(bytes);
  }
  const scan = scanJson(text, MAX_MESSAGE_DEPTH);
  if (!scan.ok) {
    return refuse(JSONRPC_PARSE_ERROR, recoverIdFromPrefix(text.slice(0, ID_SCAN_BYTES)), isUtf8 ? 'invalid_json' : 'invalid_utf8', {
      offset: scan.offset,
    });
  }
  if (!isUtf8 || scan.maxDepth > MAX_MESSAGE_DEPTH || scan.duplicateKey !== undefined || scan.protoKey !== undefined) {
    // The scanned id is parsed only for a refusal: an accepted line's id comes from JSON.parse.
    const id = scan.idText === undefined ? null : parseIdText(scan.idText);
    if (!isUtf8) return refuse(JSONRPC_INVALID_REQUEST, id, 'invalid_utf8');
    if (scan.maxDepth > MAX_MESSAGE_DEPTH) return refuse(JSONRPC_INVALID_REQUEST, id, 'too_deep', { maxDepth: MAX_MESSAGE_DEPTH });
    if (scan.duplicateKey !== undefined) return refuse(JSONRPC_INVALID_REQUEST, id, 'duplicate_key', { key: scan.duplicateKey });
    // What runs and what is journaled must be exactly what was sent (SPEC section 5).
    return refuse(JSONRPC_INVALID_REQUEST, id, 'proto_key', { key: scan.protoKey });
  }
  if (scan.topLevel === 'array') return refuse(JSONRPC_INVALID_REQUEST, null, 'batch_not_supported');
  // Depth is bounded now, so JSON.parse is cheap and cannot recurse deeply.
  return checkShape(JSON.parse(text) as unknown, scan.idText);
}

/** The answer for a line that grew past the cap; `prefix` is its first bytes, for the id. */
export function refuseOversized(prefix: Uint8Array, maxMessageBytes: number): LineCheck {
  const id = recoverIdFromPrefix(LOSSY_UTF8.decode(prefix));
  return refuse(JSONRPC_INVALID_REQUEST, id, 'too_large', { maxBytes: maxMessageBytes });
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LOSSY_UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

const MESSAGES: Record<typeof JSONRPC_PARSE_ERROR | typeof JSONRPC_INVALID_REQUEST, string> = {
  [JSONRPC_PARSE_ERROR]: 'Parse error',
  [JSONRPC_INVALID_REQUEST]: 'Invalid Request',
};

function refuse(code: typeof JSONRPC_PARSE_ERROR | typeof JSONRPC_INVALID_REQUEST, id: RequestId, reason: MalformedReason, details: Record<string, unknown> = {}): Refusal {
  return {
    ok: false,
    response: { jsonrpc: '2.0', id, error: { code, message: MESSAGES[code], data: errorData('malformed_request', { reason, ...details }) } },
  };
}

/**
 * JSON-RPC 2.0 shape, as MCP narrows it: no batches, object params, string or integer ids,
 * and nothing the SDK's message schemas refuse (sdk-dispatch.ts: it would drop that unanswered).
 * `scannedIdText` is the raw top-level id the scan saw, parsed only when the value's own id is unusable.
 */
function checkShape(value: unknown, scannedIdText: string | undefined): LineCheck {
  if (!isRecord(value)) return refuse(JSONRPC_INVALID_REQUEST, null, 'not_jsonrpc');
  const id = isRequestId(value['id']) ? value['id'] : null;
  // A message with an unusable id still gets an answer, addressed to null.
  const answerId = id ?? (scannedIdText === undefined ? null : parseIdText(scannedIdText));
  if (value['jsonrpc'] !== '2.0') return refuse(JSONRPC_INVALID_REQUEST, answerId, 'not_jsonrpc', { field: 'jsonrpc' });
  if ('id' in value && id === null) return refuse(JSONRPC_INVALID_REQUEST, null, 'not_jsonrpc', { field: 'id' });
  if ('method' in value) {
    if (typeof value['method'] !== 'string') return refuse(JSONRPC_INVALID_REQUEST, answerId, 'not_jsonrpc', { field: 'method' });
    const params = value['params'];
    if (params !== undefined && !isRecord(params)) return refuse(JSONRPC_INVALID_REQUEST, answerId, 'not_jsonrpc', { field: 'params' });
    if (value['method'] === 'tools/call' && params !== undefined) {
      const args = params['arguments'];
      if (args !== undefined && !isRecord(args)) return refuse(JSONRPC_INVALID_REQUEST, answerId, 'arguments_not_object');
    }
    // Past the raw checks, a message the SDK would not dispatch would be dropped unanswered.
    const refusedKey = sdkRefusal(value, id === null ? 'notification' : 'request');
    if (refusedKey === undefined) return { ok: true, message: value as JSONRPCMessage };
    const refusal = refuse(JSONRPC_INVALID_REQUEST, id, 'not_mcp_message', { key: refusedKey });
    return id === null ? { ...refusal, notification: { method: value['method'] as string } } : refusal;
  }
  // A response to one of our requests (elicitation): exactly one of result or error.
  if (id === null) return refuse(JSONRPC_INVALID_REQUEST, null, 'not_jsonrpc', { field: 'id' });
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) return refuse(JSONRPC_INVALID_REQUEST, null, 'not_jsonrpc', { field: hasResult ? 'error' : 'result' });
  const refusedKey = sdkRefusal(value, 'response');
  if (refusedKey !== undefined) return refuse(JSONRPC_INVALID_REQUEST, null, 'not_mcp_message', { key: refusedKey });
  return { ok: true, message: value as JSONRPCMessage };
}
