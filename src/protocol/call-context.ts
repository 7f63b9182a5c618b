// What a tools/call handler may use of its request: the part of the SDK's
// ServerContext our code reads. The SDK builds it for requests it dispatches;
// the tools/call fast path (call-fast-path.ts) builds the same for its own.
import type { ServerContext } from '@modelcontextprotocol/server';
import type { CallControl } from '../supervisor/call-control.js';

type McpRequest = ServerContext['mcpReq'];

export interface CallRequestContext {
  readonly mcpReq: Pick<McpRequest, 'id' | 'signal' | 'notify' | 'log' | 'elicitInput' | 'envelope' | 'inputResponses' | 'droppedInputResponseKeys'> & {
    /** The retry's raw requestState (modern), undefined when none was sent. */
    readonly requestState: () => unknown;
  };
  /**
   * The call's control, when the door built it (the fast path): the request's cancel
   * stops it directly, with no AbortSignal and no listener. Absent (the SDK's door):
   * the handler builds one that follows `mcpReq.signal`.
   */
  readonly control?: CallControl;
}

/** The params of a tools/call the handler reads (the SDK hands it its parsed copy, the fast path the checked original). */
export interface ToolsCallParams {
  readonly name: string;
  readonly arguments?: Record<string, unknown>;
  readonly _meta?: Record<string, unknown>;
}
