// Whether the MCP SDK would dispatch a message the raw-line checks let through
// (SPEC section 5 step 1). The SDK's Protocol tries each inbound message
// against its JSON-RPC response, request and notification schemas, and one
// that matches none is only reported to onerror ("Unknown message type");
// serveStdio drops the same before an era is pinned. Without this check a
// request such as `_meta.progressToken: 1.5`, `_meta: null` or an extra
// top-level member would never be answered. The SDK's own exported guards
// judge (the very ones its dispatch calls), so the two cannot drift; a narrow
// shortcut spares the common line their cost.
import { isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse, RELATED_TASK_META_KEY, specTypeSchemas } from '@modelcontextprotocol/server';

type MessageKind = 'request' | 'notification' | 'response';

/**
 * Undefined when the SDK dispatches `message` (already a JSON-RPC object of `kind`
 * by the raw checks); otherwise the first member its schema refuses, as a JSON
 * pointer (`/params/_meta/progressToken`, `/extra`; `""` for the message itself).
 */
export function sdkRefusal(message: Record<string, unknown>, kind: MessageKind): string | undefined {
  if (kind !== 'response' && isSurelyDispatched(message)) return undefined;
  if (sdkDispatches(message, kind)) return undefined;
  return firstRefusedKey(message, kind);
}

/** The guards the SDK's Protocol dispatch calls, for the kind the raw checks saw. */
export function sdkDispatches(message: Record<string, unknown>, kind: MessageKind): boolean {
  if (kind === 'request') return isJSONRPCRequest(message);
  if (kind === 'notification') return isJSONRPCNotification(message);
  return isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
}

/**
 * A request or notification whose every member the SDK's schema either does not
 * look at or has already been checked for by the raw checks (jsonrpc, id, method,
 * params an object): only the four top-level members, and no `_meta`, or one whose
 * progress token, if any, is a string or a safe integer (as the fast path's calls
 * are) and without a related-task key (rare: left to the SDK's guard). It can only
 * say yes where the SDK does: sdk-dispatch.test.ts holds it to the SDK's guard over
 * a corpus and to the shapes of the SDK's schemas, so an SDK that starts parsing
 * more fails that test.
 */
export function isSurelyDispatched(message: Record<string, unknown>): boolean {
  for (const key in message) {
    if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return false;
  }
  const params = message['params'] as Record<string, unknown> | undefined;
  if (params === undefined) return true;
  const meta = params['_meta'];
  if (meta === undefined) return true;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return false;
  const fields = meta as Record<string, unknown>;
  const token = fields['progressToken'];
  if (token !== undefined && typeof token !== 'string' && !Number.isSafeInteger(token)) return false;
  return fields[RELATED_TASK_META_KEY] === undefined;
}

/** Only for a refusal: the SDK schema's first issue, as a path the answer can name. */
function firstRefusedKey(message: Record<string, unknown>, kind: MessageKind): string {
  const schema =
    kind === 'request'
      ? specTypeSchemas.JSONRPCRequest
      : kind === 'notification'
        ? specTypeSchemas.JSONRPCNotification
        : 'result' in message
          ? specTypeSchemas.JSONRPCResultResponse
          : specTypeSchemas.JSONRPCErrorResponse;
  const outcome = schema['~standard'].validate(message);
  if (outcome instanceof Promise) return '';
  const issue = outcome.issues?.[0] as { readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>; readonly keys?: readonly string[] } | undefined;
  if (issue === undefined) return '';
  const path = (issue.path ?? []).map((segment) => (typeof segment === 'object' ? segment.key : segment));
  // An unknown member is reported on its parent, with the names beside it.
  const unknown = issue.keys?.[0];
  if (unknown !== undefined) path.push(unknown);
  return path.map((segment) => `/${typeof segment === 'number' ? '-' : escapePointer(String(segment))}`).join('');
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
