// The tools/call fast path of a legacy-era stdio connection. The SDK's Server
// parses every request with zod twice, validates every result with zod, and
// builds several context objects per call: most of the host's main-thread cost
// per call. A tools/call this module is sure of (the plain shape every client
// sends, on an initialized legacy connection) is instead checked here, handed
// to the same handler the SDK would call, and answered with the bytes the SDK
// would write. Anything else (another method, a response, a notification, a
// request with any field we do not know, a duplicate id, the modern era)
// reaches the SDK untouched, and no call is taken while an earlier message is
// still on its way to the SDK instance: both doors see messages in the same
// order. test/unit/protocol/call-fast-path.test.ts compares the two.
import {
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type CallToolResult,
  type InputRequiredResult,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type ProtocolEra,
  type RequestId,
  type Server,
  type Transport,
} from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import { CallControl } from '../supervisor/call-control.js';
import type { CallRequestContext, ToolsCallParams } from './call-context.js';
import { isRecord } from '../config/guards.js';
import { isRequestId } from './request-id.js';

export type ToolsCallHandler = (params: ToolsCallParams, ctx: CallRequestContext) => Promise<CallToolResult | InputRequiredResult>;

/** A tools/call the fast path took: its id and its params, checked. */
interface FastCall {
  readonly id: RequestId;
  readonly params: ToolsCallParams;
}

/**
 * A call the fast path runs: the request's cancel (notifications/cancelled, the
 * connection's close), told straight to the call's control, which the handler
 * runs the call under. No AbortSignal and no listener unless something reads
 * the request's signal (ctx.mcpReq.signal): most calls are never cancelled.
 */
class RunningCall {
  /** The call's one termination control (server.ts uses it instead of building one). */
  readonly control = new CallControl();
  #cancelled = false;
  #reason: unknown;
  #request: AbortController | undefined;

  /** Whether the client cancelled the request (or the connection closed): nothing more is sent for it. */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** The request's own signal, as the SDK gives a handler: made on first read, aborted only by the request's cancel. */
  get signal(): AbortSignal {
    if (this.#request === undefined) {
      this.#request = new AbortController();
      if (this.#cancelled) this.#request.abort(this.#reason);
    }
    return this.#request.signal;
  }

  /** The request's cancel: the call stops (`cancelled`, the signals aborting with `reason`), once. */
  cancel(reason: unknown): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#reason = reason;
    this.control.abort(reason);
    this.#request?.abort(reason);
  }
}

/** The SDK's era codec, for the results whose shape the fast path does not know by heart. */
interface ResultCodec {
  validateResult(method: string, raw: unknown): { ok: true; value: unknown } | { ok: false; reason: string; message?: string };
}

/** The legacy instance the fast path serves for, once connected. */
interface Bound {
  readonly server: Server;
  /** The channel serveStdio connected it to (what the SDK's answers go through). */
  readonly channel: Transport;
  readonly handle: ToolsCallHandler;
  readonly codec: () => ResultCodec;
}

/**
 * The fast path of one stdio connection. It sits on the wire transport in front of
 * serveStdio, and knows each SDK instance's channel (attach): it takes a call only
 * while every message it passed on has already been delivered to the SDK instance,
 * so no call ever overtakes an earlier message (a logging/setLevel, a cancel).
 */
export class CallFastPath {
  #bound: Bound | undefined;
  /** Messages passed to serveStdio and not yet delivered to an instance. */
  #undelivered = 0;
  readonly #passed = new WeakSet<object>();
  /** Our calls in flight by id, as the SDK keeps its own: a cancel stops the call. */
  readonly #inFlight = new Map<RequestId, RunningCall>();

  constructor(
    private readonly wire: Transport,
    private readonly logger: Logger,
  ) {}

  /** Puts the fast path in front of serveStdio's handler; call right after serveStdio. */
  install(): void {
    const sdkOnMessage = this.wire.onmessage;
    this.wire.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      if (extra === undefined && this.#undelivered === 0) {
        const call = this.#takeCall(message);
        if (call !== undefined) return this.#start(call);
      }
      if (typeof message === 'object' && message !== null) {
        this.#passed.add(message);
        this.#undelivered++;
      }
      sdkOnMessage?.(message, extra);
    };
  }

  /**
   * Hooks `server` (any era) once serveStdio connects it: its deliveries are counted;
   * a legacy instance's calls may take the fast path. Without the SDK's codec accessor
   * (another SDK version) the fast path stays off and the SDK serves everything.
   */
  attach(server: Server, era: ProtocolEra, handle: ToolsCallHandler): void {
    const codecOf = (server as unknown as { _wireCodec?: () => ResultCodec })._wireCodec;
    const connect = server.connect.bind(server);
    server.connect = async (channel: Transport): Promise<void> => {
      await connect(channel);
      this.#hookChannel(channel);
      if (era !== 'legacy') return;
      if (typeof codecOf !== 'function') {
        this.logger.debug('tools/call fast path off: this SDK has no wire codec accessor');
        return;
      }
      this.#bound = { server, channel, handle, codec: () => codecOf.call(server) };
    };
  }

  #hookChannel(channel: Transport): void {
    const sdkOnMessage = channel.onmessage;
    const sdkOnClose = channel.onclose;
    channel.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      if (this.#passed.delete(message)) this.#undelivered--;
      // Delivered in order behind everything before it: the SDK's own cancel runs now too.
      this.#followCancel(message);
      sdkOnMessage?.(message, extra);
    };
    channel.onclose = () => {
      try {
        sdkOnClose?.();
      } finally {
        if (this.#bound?.channel === channel) {
          // As the SDK does on close: every running request is aborted, none is answered.
          const error = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed');
          const running = [...this.#inFlight.values()];
          this.#inFlight.clear();
          for (const call of running) call.cancel(error);
        }
      }
    };
  }

  /** The call when the fast path is sure of it, else undefined (the SDK takes it). */
  #takeCall(message: JSONRPCMessage): FastCall | undefined {
    const bound = this.#bound;
    // Only on a connected instance, once initialize negotiated its version (and client capabilities).
    if (bound === undefined || bound.server.transport !== bound.channel || bound.server.getNegotiatedProtocolVersion() === undefined) return undefined;
    const call = plainToolsCall(message);
    // A reused id is a client bug the SDK answers its own way.
    if (call === undefined || this.#inFlight.has(call.id)) return undefined;
    return call;
  }

  #start({ id, params }: FastCall): void {
    const bound = this.#bound!;
    const call = new RunningCall();
    this.#inFlight.set(id, call);
    void this.#run(bound, id, call, params, contextOf(bound.server, id, call));
  }

  /** One async function, not a chain of five promises and their closures per call. */
  async #run(bound: Bound, id: RequestId, call: RunningCall, params: ToolsCallParams, ctx: CallRequestContext): Promise<void> {
    try {
      // The SDK runs handlers a microtask after delivery: so does this.
      await undefined;
      let result: CallToolResult | InputRequiredResult;
      try {
        result = await bound.handle(params, ctx);
      } catch (error) {
        await this.#answerError(bound, id, call, error);
        return;
      }
      await this.#answer(bound, id, call, result);
    } catch (error) {
      bound.server.onerror?.(new Error(`Failed to send response: ${String(error)}`));
    } finally {
      if (this.#inFlight.get(id) === call) this.#inFlight.delete(id);
    }
  }

  async #answer(bound: Bound, id: RequestId, call: RunningCall, result: CallToolResult | InputRequiredResult): Promise<void> {
    let wire: unknown;
    try {
      wire = wireResult(bound, result);
    } catch (error) {
      return this.#answerError(bound, id, call, error);
    }
    // After a cancel nothing more is sent for the request (SPEC section 6).
    if (call.cancelled) return;
    await this.#send(bound, { result: wire as CallToolResult, jsonrpc: '2.0', id });
  }

  /** The SDK's error response for a handler that threw. */
  async #answerError(bound: Bound, id: RequestId, call: RunningCall, error: unknown): Promise<void> {
    if (call.cancelled) return;
    const fault = error as { code?: unknown; message?: unknown; data?: unknown };
    const thrown = Number.isSafeInteger(fault.code) ? (fault.code as number) : ProtocolErrorCode.InternalError;
    await this.#send(bound, {
      jsonrpc: '2.0',
      id,
      error: {
        // The legacy codec's encodeErrorCode: -32002 is -32602 on this era's wire.
        code: thrown === -32002 ? ProtocolErrorCode.InvalidParams : thrown,
        message: (fault.message as string | undefined) ?? 'Internal error',
        ...(fault.data !== undefined ? { data: fault.data } : {}),
      },
    });
  }

  /**
   * Straight to the wire, as the legacy channel would pass it (its other work, the
   * probe bookkeeping and the modern intercept, is for requests it delivered and
   * for the modern era); nothing once the instance is closed, as the channel drops it.
   */
  async #send(bound: Bound, message: JSONRPCMessage): Promise<void> {
    if (bound.server.transport !== bound.channel) return;
    await this.wire.send(message);
  }

  /** A well-formed notifications/cancelled cancels our call of that id, a microtask later, as the SDK's handler does. */
  #followCancel(message: JSONRPCMessage): void {
    if (this.#inFlight.size === 0) return;
    const requestId = cancelledRequestId(message);
    if (requestId === undefined) return;
    const { reason } = (message as { params: { reason?: string } }).params;
    void Promise.resolve().then(() => this.#inFlight.get(requestId)?.cancel(reason));
  }
}

/** The context the SDK's Server.buildContext gives a legacy request, for what the handler reads, and the call's control. */
function contextOf(server: Server, id: RequestId, call: RunningCall): CallRequestContext {
  return { control: call.control, mcpReq: new FastRequest(server, id, call) };
}

type McpRequest = CallRequestContext['mcpReq'];

/**
 * The `mcpReq` of a fast-path call: what the handler uses as methods of one object
 * (callers always call them on it), not a closure per method per call.
 */
class FastRequest implements McpRequest {
  // The host filters lifecycle messages itself (requestedLogLevel); the SDK's own
  // level map stays empty because server.ts answers logging/setLevel.
  readonly envelope = undefined;
  readonly inputResponses = undefined;
  readonly droppedInputResponseKeys = undefined;

  constructor(
    readonly server: Server,
    readonly id: RequestId,
    readonly call: RunningCall,
  ) {}

  /** Made only if read (progress and log forwarding check it). */
  get signal(): AbortSignal {
    return this.call.signal;
  }

  notify(notification: Parameters<McpRequest['notify']>[0]): Promise<void> {
    return this.server.notification(notification, { relatedRequestId: this.id });
  }

  log(level: Parameters<McpRequest['log']>[0], data: unknown, logger?: string): Promise<void> {
    return this.notify({ method: 'notifications/message', params: { level, data, logger } });
  }

  elicitInput(params: Parameters<McpRequest['elicitInput']>[0], options?: Parameters<McpRequest['elicitInput']>[1]): ReturnType<McpRequest['elicitInput']> {
    return this.server.elicitInput(params, options);
  }

  requestState(): undefined {
    return undefined;
  }
}

/** What the SDK's tools/call wrapper makes of a handler's result: the zod output, or its error. */
function wireResult(bound: Bound, result: CallToolResult | InputRequiredResult): unknown {
  // Legacy calls get no input_required outcome (approval is elicitation there); one is a host bug.
  if (isInputRequiredResult(result)) throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error.');
  const plain = plainResultInWireOrder(result);
  if (plain !== undefined) return plain;
  const validated = bound.codec().validateResult('tools/call', result);
  if (validated.ok) return validated.value;
  throw validated.reason === 'not-in-era'
    ? new ProtocolError(ProtocolErrorCode.InternalError, 'No wire schema for tools/call in the resolved era')
    : new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid tools/call result: ${validated.message ?? ''}`);
}

const TOOLS_CALL_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS = new Set(['name', 'arguments', '_meta']);
/** `_meta` keys the SDK lifts or parses itself (the modern envelope, related-task): such calls go to it. */
const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/**
 * The call when `message` is a tools/call the SDK's 2025 schema takes as it is (the
 * boundary already checked JSON-RPC shape, ids, object arguments, `__proto__`):
 * only `name`, `arguments`, `_meta` in params, a valid progress token, no reserved key.
 */
export function plainToolsCall(message: JSONRPCMessage): FastCall | undefined {
  const request = message as { method?: unknown; id?: unknown; params?: unknown };
  if (request.method !== 'tools/call' || request.id === undefined) return undefined;
  for (const key in request) if (!TOOLS_CALL_KEYS.has(key)) return undefined;
  const params = request.params;
  if (!isRecord(params)) return undefined;
  for (const key in params) if (!PARAMS_KEYS.has(key)) return undefined;
  if (typeof params['name'] !== 'string') return undefined;
  const args = params['arguments'];
  if (args !== undefined && !isRecord(args)) return undefined;
  const meta = params['_meta'];
  if (meta !== undefined && !isPlainRequestMeta(meta)) return undefined;
  return { id: request.id as RequestId, params: params as unknown as ToolsCallParams };
}

/** The requestId of a notifications/cancelled the SDK's schema accepts, else undefined. */
export function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  const notification = message as { method?: unknown; id?: unknown; params?: unknown };
  if (notification.method !== 'notifications/cancelled' || 'id' in notification) return undefined;
  const params = notification.params;
  if (!isRecord(params)) return undefined;
  const { requestId, reason, _meta: meta } = params;
  if (!isRequestId(requestId)) return undefined;
  if (reason !== undefined && typeof reason !== 'string') return undefined;
  if (meta !== undefined && !isValidNotificationMeta(meta)) return undefined;
  return requestId;
}

/** The SDK's 2025 RequestMeta schema, after it lifted the envelope keys out (they are not parsed there). */
function isValidNotificationMeta(meta: unknown): boolean {
  if (!isRecord(meta)) return false;
  const token = meta['progressToken'];
  if (token !== undefined && !isRequestId(token)) return false;
  const task = meta[RELATED_TASK_META_KEY];
  return task === undefined || (isRecord(task) && typeof task['taskId'] === 'string');
}

function isPlainRequestMeta(meta: unknown): meta is Record<string, unknown> {
  if (!isRecord(meta)) return false;
  for (const key in meta) if (key.startsWith(RESERVED_META_PREFIX)) return false;
  const token = meta['progressToken'];
  return token === undefined || isRequestId(token);
}

/**
 * A result of the shape renderOutcome gives a text result or an error, with its keys
 * in the order the SDK's zod parse writes them; undefined for anything else (images,
 * resources, links, annotations, reserved keys), which the SDK's codec validates.
 */
export function plainResultInWireOrder(result: CallToolResult): CallToolResult | undefined {
  const { content, structuredContent, isError, _meta: meta } = result;
  for (const key in result) if (!RESULT_KEYS.has(key)) return undefined;
  if (!Array.isArray(content) || !content.every(isPlainTextBlock)) return undefined;
  if (structuredContent !== undefined && !isPlainRecord(structuredContent)) return undefined;
  if (isError !== undefined && typeof isError !== 'boolean') return undefined;
  if (meta !== undefined && !(isPlainRecord(meta) && !('progressToken' in meta) && !Object.keys(meta).some((key) => key.startsWith(RESERVED_META_PREFIX)))) {
    return undefined;
  }
  // Key by key, in that order (a spread of a conditional literal per key made throwaway objects).
  const plain: { -readonly [K in keyof CallToolResult]: CallToolResult[K] } = meta !== undefined ? { _meta: meta, content } : { content };
  if (structuredContent !== undefined) plain.structuredContent = structuredContent;
  if (isError !== undefined) plain.isError = isError;
  return plain;
}

const RESULT_KEYS = new Set(['content', 'structuredContent', 'isError', '_meta']);

/** `{type: "text", text}`, keys in that order (the order zod writes them). */
function isPlainTextBlock(block: unknown): boolean {
  if (!isRecord(block)) return false;
  let index = 0;
  for (const key in block) {
    if (key !== (index === 0 ? 'type' : index === 1 ? 'text' : undefined)) return false;
    index++;
  }
  return index === 2 && block['type'] === 'text' && typeof block['text'] === 'string';
}

/** A record zod copies as it is: an own `__proto__` key it would turn into a prototype. */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && !Object.hasOwn(value, '__proto__');
}
