// Sessions over HTTP (SPEC sections 5.2 and 6.1). A principal's session is
// one CallSession with its own call budget and concurrency slots, shared by
// its modern requests and all its legacy MCP sessions, so `maxConcurrency`
// holds per principal and no principal can use up another's. Legacy
// (2025-era) clients also get a sessionful Streamable HTTP transport each
// (Mcp-Session-Id), bound to the principal that opened it: elicitation needs
// the client's answer to reach the same server instance.
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport, type Server } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import type { Caller, ToolhostServing } from './server.js';
import { isRecord } from '../config/guards.js';
import { isRequestId } from './request-id.js';

/** One Caller per principal, made on first use and kept for the life of the host. */
export class PrincipalSessions {
  readonly #callers = new Map<string, Caller>();

  constructor(private readonly serving: ToolhostServing) {}

  callerFor(principal: string): Caller {
    let caller = this.#callers.get(principal);
    if (!caller) {
      caller = { principal, session: this.serving.supervisor.openSession(principal) };
      this.#callers.set(principal, caller);
    }
    return caller;
  }
}

interface LegacySession {
  readonly principal: string;
  readonly transport: ActivityTrackingTransport;
  readonly server: Server;
}

/**
 * A legacy session's transport that knows when it was last used (a request in, a
 * message out) and how many of its client's requests are unanswered, so that an
 * abandoned session can be closed without cutting a call that is still running.
 */
class ActivityTrackingTransport extends WebStandardStreamableHTTPServerTransport {
  lastActiveMs = Date.now();
  readonly #unanswered = new Set<string | number>();

  get isBusy(): boolean {
    return this.#unanswered.size > 0;
  }

  /** Notes a request from the client (called before the SDK sees it). */
  noteIncoming(body: unknown): void {
    this.lastActiveMs = Date.now();
    for (const message of Array.isArray(body) ? body : [body]) {
      if (!isRecord(message) || typeof message['method'] !== 'string') continue;
      if (isRequestId(message['id'])) this.#unanswered.add(message['id']);
      // A cancelled request is never answered (SPEC 6): it no longer keeps the session busy.
      const params = message['params'];
      if (message['method'] === 'notifications/cancelled' && isRecord(params) && isRequestId(params['requestId'])) this.#unanswered.delete(params['requestId']);
    }
  }

  override send(
    message: Parameters<WebStandardStreamableHTTPServerTransport['send']>[0],
    options?: Parameters<WebStandardStreamableHTTPServerTransport['send']>[1],
  ): Promise<void> {
    this.lastActiveMs = Date.now();
    const record = message as unknown as Record<string, unknown>;
    if (('result' in record || 'error' in record) && isRequestId(record['id'])) this.#unanswered.delete(record['id']);
    return super.send(message, options);
  }
}

/** Most legacy MCP sessions open at once, over all principals: a bound on memory. */
const MAX_LEGACY_SESSIONS = 1024;
/** Most open legacy sessions of one principal; opening one more closes its oldest, so no principal can fill the host. */
const MAX_LEGACY_SESSIONS_PER_PRINCIPAL = 32;
/**
 * A legacy session with no request and no message for this long, and none of its
 * client's requests unanswered, is closed: a client that went away without DELETE
 * leaves nothing for ever. A client that comes back gets 404 for the old id and, as
 * the MCP transport says it must, starts a new session with initialize.
 */
const LEGACY_SESSION_IDLE_MS = 30 * 60_000;
/** Longest gap between two looks for idle sessions. */
const IDLE_SWEEP_MAX_EVERY_MS = 60_000;

/** The sessionful legacy leg: Mcp-Session-Id → transport + server, per principal. */
export class LegacySessions {
  readonly #sessions = new Map<string, LegacySession>();
  readonly #idleMs: number;
  readonly #sweep: NodeJS.Timeout;

  constructor(
    private readonly serving: ToolhostServing,
    private readonly principals: PrincipalSessions,
    private readonly options: { readonly maxMessageBytes: number; readonly logger: Logger; readonly idleMs?: number },
  ) {
    this.#idleMs = Math.max(1, options.idleMs ?? LEGACY_SESSION_IDLE_MS);
    this.#sweep = setInterval(() => void this.#closeIdle(), Math.min(this.#idleMs, IDLE_SWEEP_MAX_EVERY_MS));
    this.#sweep.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Serves one legacy request of `principal` (already authenticated, body already checked). */
  async handle(request: Request, principal: string, parsedBody: unknown): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
      const session = this.#sessions.get(sessionId);
      // Another principal's session id is answered as an unknown one: ids are not shared secrets to probe.
      if (!session || session.principal !== principal) return sessionNotFound();
      session.transport.noteIncoming(parsedBody);
      return session.transport.handleRequest(request, { parsedBody });
    }
    if (request.method !== 'POST' || !isInitialize(parsedBody)) {
      return jsonRpcError(400, -32000, 'Bad Request: send initialize first, or the Mcp-Session-Id of your session.');
    }
    await this.#evictOldestBeyond(principal, MAX_LEGACY_SESSIONS_PER_PRINCIPAL - 1);
    if (this.#sessions.size >= MAX_LEGACY_SESSIONS) return jsonRpcError(503, -32000, 'Too many open sessions; close one (DELETE) and retry.');
    const session = await this.#open(principal);
    session.transport.noteIncoming(parsedBody);
    return session.transport.handleRequest(request, { parsedBody });
  }

  /** Closes every session (host shutdown). */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweep);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map((session) => session.server.close()));
  }

  // Map order is opening order: the first sessions of the principal are its oldest.
  async #evictOldestBeyond(principal: string, keep: number): Promise<void> {
    const own = [...this.#sessions].filter(([, session]) => session.principal === principal);
    for (const [id, session] of own.slice(0, Math.max(0, own.length - keep))) {
      this.#sessions.delete(id);
      await session.server.close().catch(() => undefined);
    }
  }

  async #closeIdle(): Promise<void> {
    const now = Date.now();
    for (const [id, session] of [...this.#sessions]) {
      if (session.transport.isBusy || now - session.transport.lastActiveMs < this.#idleMs) continue;
      this.#sessions.delete(id);
      this.options.logger.info({ principal: session.principal, idleMs: now - session.transport.lastActiveMs }, 'legacy http session closed: idle');
      await session.server.close().catch(() => undefined);
    }
  }

  async #open(principal: string): Promise<LegacySession> {
    const transport = new ActivityTrackingTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxMessageBytes,
      onsessioninitialized: (id) => {
        this.#sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.#sessions.delete(id);
      },
    });
    const server = this.serving.buildServer('legacy', this.principals.callerFor(principal));
    const session: LegacySession = { principal, transport, server };
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.#sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return session;
  }
}

function isInitialize(body: unknown): boolean {
  return isRecord(body) && body['method'] === 'initialize';
}

function sessionNotFound(): Response {
  return jsonRpcError(404, -32001, 'Session not found.');
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', id: null, error: { code, message } }, { status });
}
