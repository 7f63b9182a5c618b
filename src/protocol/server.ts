// Stage 2 of a call: the MCP server. One low-level SDK Server per connection
// era (serveStdio pins legacy or modern on the opening message), whose
// handlers hand every tools/call to the supervisor and render its outcome.
// No decision is made here: the supervisor decides, results.ts renders.
import { ProtocolError, Server, type Implementation, type LoggingLevel, type ProtocolEra, type Transport } from '@modelcontextprotocol/server';
import { serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { errorData, hostError } from '../errors.js';
import type { Logger } from '../log.js';
import { CallControl } from '../supervisor/call-control.js';
import type { CallSession } from '../supervisor/call-session.js';
import type { CallRequest, Supervisor } from '../supervisor/types.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { approvalChannelFor, approvalAnswerFrom } from './approval-channel.js';
import { forwardLifecycleEvents, forwardProgress, requestedLogLevel } from './notifications.js';
import { readArtifactResource, ARTIFACT_URI_TEMPLATE } from './resources.js';
import { renderOutcome } from './results.js';
import { JSONRPC_INTERNAL_ERROR } from './jsonrpc-codes.js';
import { TERMINAL_META_KEY } from '../supervisor/result/envelope.js';
import { CallFastPath, type ToolsCallHandler } from './call-fast-path.js';
import { SERVER_CAPABILITIES, SERVER_INSTRUCTIONS } from './server-identity.js';

/**
 * Adds methods beyond the MCP spec (e.g. `toolhost/render`, `toolhost/parse`) to each server
 * instance. `supervisor()` returns the one in force now (a reload may replace it).
 */
export type RegisterMethods = (server: Server, context: { readonly era: ProtocolEra; readonly supervisor: () => Supervisor }) => void;

export interface ToolhostServerOptions {
  readonly supervisor: Supervisor;
  readonly logger: Logger;
  readonly serverInfo: Implementation;
  /** The seam for custom methods; called once per server instance, before it connects. */
  readonly registerMethods?: readonly RegisterMethods[];
  /** How long a legacy client may take to answer an approval question. Default 5 minutes. */
  readonly elicitationTimeoutMs?: number;
  /** Spans and metrics per call (SPEC section 6.2); absent when telemetry is off. */
  readonly telemetry?: Telemetry;
  /**
   * stdio only: let well-formed legacy tools/call requests skip the SDK's dispatch
   * (call-fast-path.ts). Default true; false serves every message through the SDK
   * (the differential test compares the two).
   */
  readonly callFastPath?: boolean;
  /**
   * Resolves once every upstream server still starting has listed (or failed): tools/list
   * waits for it (serve's fast start; SPEC section 2.1). Absent: nothing to wait for.
   */
  readonly whenToolsListed?: () => Promise<void>;
  /** For a tool of a server still starting: resolves once its tools are in force (tools/call waits). */
  readonly whenToolReady?: (name: string) => Promise<void> | undefined;
}

/** Who is calling, over HTTP: the authenticated principal and its session (its own limits). */
export interface Caller {
  readonly principal: string;
  readonly session: CallSession;
}

export interface ToolhostServer {
  /** Aborts every in-flight call (reason: shutdown) and waits, at most `timeoutMs`, for their answers to be written. */
  cancelInFlight(timeoutMs: number): Promise<void>;
  /**
   * After a reload: new calls go to `next`, calls already running finish on the old
   * supervisor, and the client gets notifications/tools/list_changed.
   */
  replaceSupervisor(next: Supervisor): Promise<void>;
  /** Resolves once no call is running on `supervisor` (then it may be closed). */
  whenIdle(supervisor: Supervisor): Promise<void>;
  /** Closes the server instance and the transport. */
  close(): Promise<void>;
  /** How many tools/call requests are running. */
  readonly inFlightCount: number;
}

/** Serves MCP on `transport` (both eras, one connection) with the supervisor behind it. */
export function serveToolhost(transport: Transport, options: ToolhostServerOptions): ToolhostServer {
  const serving = new ToolhostServing(options);
  const fastPath = options.callFastPath === false ? undefined : new CallFastPath(transport, options.logger);
  const handle: StdioServerHandle = serveStdio(({ era }) => serving.buildServer(era, undefined, fastPath), {
    transport,
    onerror: (error) => options.logger.debug({ err: error.message }, 'mcp transport notice'),
  });
  // In front of the handler serveStdio just set on the transport, before any message arrives.
  fastPath?.install();
  return serverHandleOf(serving, () => handle.close());
}

/** The ToolhostServer face of a serving (the stdio and HTTP fronts differ only in `close`). */
export function serverHandleOf(serving: ToolhostServing, close: () => Promise<void>): ToolhostServer {
  return {
    get inFlightCount() {
      return serving.inFlightCount;
    },
    cancelInFlight: (timeoutMs) => serving.cancelInFlight(timeoutMs),
    replaceSupervisor: (next) => serving.replaceSupervisor(next),
    whenIdle: (supervisor) => serving.whenIdle(supervisor),
    close,
  };
}

/**
 * What the servers of one transport share (the supervisor in force, the calls in
 * flight), and the factory of their SDK Server instances: one per stdio connection,
 * one per HTTP request (modern) or per legacy HTTP session.
 */
export class ToolhostServing {
  readonly #state: ServingState;
  readonly #servers = new Set<Server>();
  readonly #onReplaced = new Set<() => void>();

  constructor(private readonly options: ToolhostServerOptions) {
    this.#state = { supervisor: options.supervisor, inFlight: new Set(), idleWaiters: new Set() };
  }

  /** A server instance of `era`; over HTTP, for `caller`; `fastPath`: the stdio connection's. */
  buildServer(era: ProtocolEra, caller?: Caller, fastPath?: CallFastPath): Server {
    const server = buildServer(era, this.options, this.#state, caller, fastPath);
    this.#servers.add(server);
    server.onclose = () => this.#servers.delete(server);
    return server;
  }

  get supervisor(): Supervisor {
    return this.#state.supervisor;
  }

  get inFlightCount(): number {
    return this.#state.inFlight.size;
  }

  /** Aborts every in-flight call (reason: shutdown) and waits, at most `timeoutMs`, for their answers. */
  async cancelInFlight(timeoutMs: number): Promise<void> {
    const calls = [...this.#state.inFlight];
    for (const call of calls) call.control.abort(hostError('cancelled', { reason: 'shutdown' }));
    await Promise.race([Promise.allSettled(calls.map((call) => call.answered)), delay(timeoutMs)]);
  }

  /** New calls go to `next`; every connected server instance sends tools/list_changed. */
  async replaceSupervisor(next: Supervisor): Promise<void> {
    this.#state.supervisor = next;
    for (const listener of this.#onReplaced) listener();
    await Promise.allSettled([...this.#servers].map((server) => server.sendToolListChanged()));
  }

  /** Calls `listener` after each replaceSupervisor (HTTP: tell modern clients' listen streams). */
  onSupervisorReplaced(listener: () => void): void {
    this.#onReplaced.add(listener);
  }

  /** Resolves once no call is running on `supervisor`. */
  whenIdle(supervisor: Supervisor): Promise<void> {
    const { inFlight, idleWaiters } = this.#state;
    const isIdle = () => ![...inFlight].some((call) => call.supervisor === supervisor);
    if (isIdle()) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = () => {
        if (!isIdle()) return;
        idleWaiters.delete(waiter);
        resolve();
      };
      idleWaiters.add(waiter);
    });
  }
}

/** What every server instance of the connection shares. */
interface ServingState {
  /** The supervisor new calls go to. */
  supervisor: Supervisor;
  readonly inFlight: Set<InFlightCall>;
  /** Checked whenever a call ends. */
  readonly idleWaiters: Set<() => void>;
}

interface InFlightCall {
  readonly supervisor: Supervisor;
  /** The call's control: cancelInFlight (the host's shutdown) aborts it, with the HostError as its signal's reason. */
  readonly control: CallControl;
  /** Settles once the handler returned (its answer is handed to the SDK). */
  readonly answered: Promise<unknown>;
}

function buildServer(era: ProtocolEra, options: ToolhostServerOptions, state: ServingState, caller: Caller | undefined, fastPath: CallFastPath | undefined): Server {
  const server = new Server(options.serverInfo, { capabilities: structuredClone(SERVER_CAPABILITIES), instructions: SERVER_INSTRUCTIONS });

  // Lifecycle log messages go only to a client that asked for them (SPEC section 6).
  // The SDK's own setLevel handler would leave "never asked" and "asked for
  // everything" alike, so the legacy level is kept here.
  let legacyLogLevel: LoggingLevel | undefined;
  if (era === 'legacy') {
    server.setRequestHandler('logging/setLevel', async (request) => {
      legacyLogLevel = request.params.level;
      return {};
    });
  }

  server.setRequestHandler('tools/list', async () => {
    await options.whenToolsListed?.();
    return listedTools(state.supervisor, caller);
  });

  const handleCall = toolsCallHandler(era, options, state, caller, server, () => legacyLogLevel);

  server.setRequestHandler('tools/call', (request, ctx) => handleCall(request.params, ctx));
  // stdio: a legacy connection's well-formed calls skip the SDK's dispatch (call-fast-path.ts); the rest reach it unchanged.
  fastPath?.attach(server, era, handleCall);

  server.setRequestHandler('resources/list', async () => ({ resources: [] }));
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [{ uriTemplate: ARTIFACT_URI_TEMPLATE, name: 'artifact', description: 'A tool result too large to return inline, by SHA-256.' }],
  }));
  server.setRequestHandler('resources/read', async (request) => readArtifactResource(state.supervisor, request.params.uri));

  for (const register of options.registerMethods ?? []) register(server, { era, supervisor: () => state.supervisor });
  return server;
}

/** The tools/list answer from the supervisor in force, for this caller. */
function listedTools(supervisor: Supervisor, caller: Caller | undefined) {
  return {
    tools: supervisor.listTools(caller?.principal ?? null).map((tool) => ({
      name: tool.name,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      description: tool.description,
      inputSchema: { ...tool.inputSchema, type: 'object' as const },
      ...(tool.outputSchema ? { outputSchema: { ...tool.outputSchema, type: 'object' as const } } : {}),
      annotations: { ...tool.annotations },
      // An upstream tool's _meta as its server gave it (never the host's own keys), then the host's marks.
      ...(tool.meta || tool.terminal ? { _meta: { ...tool.meta, ...(tool.terminal ? { [TERMINAL_META_KEY]: true } : {}) } } : {}),
    })),
  };
}

/**
 * The tools/call handler of one server instance: hands the call to the supervisor in
 * force and renders its outcome. The SDK dispatches it for the calls it parses; the
 * fast path calls the same function for the ones it takes (one behaviour, two doors).
 */
function toolsCallHandler(
  era: ProtocolEra,
  options: ToolhostServerOptions,
  state: ServingState,
  caller: Caller | undefined,
  server: Server,
  legacyLogLevel: () => LoggingLevel | undefined,
): ToolsCallHandler {
  const { logger } = options;
  return async (params, ctx) => {
    // A tool of a server still starting: its tools go in force when it lists (or fails).
    const starting = options.whenToolReady?.(params.name);
    if (starting !== undefined) await starting;
    // The call stays on the supervisor it started with, even if a reload replaces it meanwhile.
    const supervisor = state.supervisor;
    // The call's one termination control (the supervisor stops it on the host's shutdown):
    // the client's cancel, and cancelInFlight's abort when serve shuts down. The fast path
    // hands its own (its cancel reaches it directly); the SDK's request signal is followed.
    const control = ctx.control ?? new CallControl([ctx.mcpReq.signal]);
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    const requestState = ctx.mcpReq.requestState();
    const approvalAnswer = approvalAnswerFrom(ctx.mcpReq.inputResponses, ctx.mcpReq.droppedInputResponseKeys);
    const progress = forwardProgress(ctx, meta['progressToken'], logger);
    const onEvent = forwardLifecycleEvents(ctx, requestedLogLevel(ctx, legacyLogLevel()), logger);
    const span = options.telemetry?.startCall({
      tool: params.name,
      requestId: ctx.mcpReq.id,
      protocolVersion: protocolVersionOf(era, server, ctx),
      meta,
    });
    // Built key by key: a spread of a conditional literal made a throwaway object per optional key per call.
    const request: Mutable<CallRequest> = {
      name: params.name,
      args: params.arguments,
      meta,
      control,
      approval: approvalChannelFor(era, server, ctx, options.elicitationTimeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS),
    };
    if (typeof requestState === 'string') request.requestState = requestState;
    if (approvalAnswer !== undefined) request.approvalAnswer = approvalAnswer;
    if (progress.onProgress) request.onProgress = progress.onProgress;
    if (onEvent) request.onEvent = onEvent;
    if (caller) request.caller = caller.session;
    if (span) request.trace = span;
    const work = supervisor.callTool(request);
    // cancelInFlight waits on it with allSettled, and the await below handles its rejection: no .catch needed.
    const call: InFlightCall = { supervisor, control, answered: work };
    state.inFlight.add(call);
    try {
      const outcome = await work;
      span?.end(outcome.kind === 'error' ? outcome.error.code : undefined);
      // Only a call that asked for progress has notifications to wait for.
      if (progress.onProgress !== undefined) await progress.settled();
      return renderOutcome(outcome, supervisor.session);
    } catch (error) {
      span?.end('internal');
      if (error instanceof ProtocolError) throw error;
      // The supervisor turns every throwable into an outcome; reaching here is a host bug.
      logger.error({ err: error instanceof Error ? error.message : String(error) }, 'supervisor.callTool threw');
      throw new ProtocolError(JSONRPC_INTERNAL_ERROR, 'Internal error.', errorData('internal'));
    } finally {
      control.dispose();
      state.inFlight.delete(call);
      // A copy only when someone waits (a waiter removes itself as it runs).
      if (state.idleWaiters.size !== 0) for (const waiter of [...state.idleWaiters]) waiter();
    }
  };
}

const DEFAULT_ELICITATION_TIMEOUT_MS = 5 * 60_000;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** The revision this request speaks: negotiated at initialize (legacy), or named in the request's envelope (modern). */
function protocolVersionOf(era: ProtocolEra, server: Server, ctx: { readonly mcpReq: { readonly envelope?: unknown } }): string | undefined {
  if (era === 'legacy') return server.getNegotiatedProtocolVersion();
  const envelope = ctx.mcpReq.envelope;
  const version = typeof envelope === 'object' && envelope !== null ? (envelope as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] : undefined;
  return typeof version === 'string' ? version : undefined;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
