// `toolhost serve --http HOST:PORT` (SPEC section 6.1): MCP Streamable HTTP at
// /mcp, both eras, in front of the same ToolhostServing as stdio. Each request
// meets, in order: Host/Origin (403), authentication (401 with a challenge),
// the body cap and the boundary checks (413/400), and only then the SDK:
// modern (2026-07-28) requests go to createMcpHandler, legacy ones to their
// principal's sessionful transport. /healthz, /readyz and the RFC 9728
// metadata answer without a token.
import { createServer, type IncomingMessage, type Server as NodeHttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, isLegacyRequest, type McpHttpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { Logger } from '../log.js';
import { bearerTokenOf, challengeFor, type Authenticator } from './auth/authenticator.js';
import { isResourceMetadataPath, resourceMetadata } from './auth/resource-metadata.js';
import { checkHostAndOrigin, isLoopbackHost, LOOPBACK_HOSTNAMES, readMessageBody, writeJson, writeJsonRpcError } from './http-guards.js';
import { LegacySessions, PrincipalSessions } from './http-sessions.js';
import type { ToolhostServing } from './server.js';
import { errorData } from '../errors.js';
import { JSONRPC_INTERNAL_ERROR } from './jsonrpc-codes.js';

const MCP_PATH = '/mcp';

export interface HttpServeOptions {
  readonly serving: ToolhostServing;
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  readonly authenticator: Authenticator;
  /** With JWTs: the issuer named in the RFC 9728 metadata. */
  readonly issuer?: string;
  /** The URL clients reach /mcp at (behind a reverse proxy); default http://HOST:PORT/mcp. */
  readonly publicUrl?: string;
  /** Host names accepted in Host and Origin besides the bind address (a reverse proxy's name). */
  readonly allowedHostnames?: readonly string[];
  readonly maxMessageBytes: number;
  /** Resolves true while the journal answers (/readyz), else false; never rejects. */
  readonly isReady: () => Promise<boolean>;
  readonly logger: Logger;
  /** How long a legacy session may sit unused before it is closed; default LEGACY_SESSION_IDLE_MS (tests shorten it). */
  readonly legacySessionIdleMs?: number;
  /** Other handlers served beside /mcp under a path prefix (the console), after the Host and Origin checks; they authenticate themselves. */
  readonly mounts?: readonly HttpMount[];
}

/** A handler for every path under `prefix` (e.g. `/console`). */
interface HttpMount {
  readonly prefix: string;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface HttpServer {
  /** The bound address, e.g. http://127.0.0.1:4711 */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections; closes sessions and the modern handler. In-flight calls are the caller's to cancel first. */
  close(): Promise<void>;
}

/** Starts the HTTP server; resolves once it listens. */
export async function serveHttp(options: HttpServeOptions): Promise<HttpServer> {
  const { serving, logger } = options;
  const principals = new PrincipalSessions(serving);
  const legacy = new LegacySessions(serving, principals, {
    maxMessageBytes: options.maxMessageBytes,
    logger,
    ...(options.legacySessionIdleMs !== undefined ? { idleMs: options.legacySessionIdleMs } : {}),
  });
  const modern: McpHttpHandler = createMcpHandler(({ era, authInfo }) => serving.buildServer(era, authInfo ? principals.callerFor(authInfo.clientId) : undefined), {
    legacy: 'reject',
    maxRequestBodySize: options.maxMessageBytes,
    onerror: (error) => logger.debug({ err: error.message }, 'mcp http notice'),
  });
  // Modern clients learn of a reload on their subscriptions/listen stream; legacy ones by their session's server.
  serving.onSupervisorReplaced(() => modern.notify.toolsChanged());
  const mcp = toNodeHandler(
    {
      fetch: async (request, handlerOptions) => {
        const principal = handlerOptions?.authInfo?.clientId;
        if (principal === undefined) throw new Error('unauthenticated request reached the MCP handler');
        if (await isLegacyRequest(request, handlerOptions?.parsedBody, { maxRequestBodySize: options.maxMessageBytes })) {
          return legacy.handle(request, principal, handlerOptions?.parsedBody);
        }
        return modern.fetch(request, handlerOptions);
      },
    },
    { maxRequestBodySize: options.maxMessageBytes, onerror: (error) => logger.warn({ err: error.message }, 'mcp http handler failed') },
  );

  let boundUrl = '';
  const allowed = (): string[] => allowedHostnamesFor(options, boundUrl);
  const resourceUrl = (): string => options.publicUrl ?? `${boundUrl}${MCP_PATH}`;
  const metadataUrl = (): string | undefined => (options.authenticator.kind === 'jwt' ? new URL('/.well-known/oauth-protected-resource/mcp', resourceUrl()).toString() : undefined);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (!checkHostAndOrigin(req, res, allowed())) return;
    if (path === '/healthz') return writeJson(res, 200, { status: 'ok' });
    if (path === '/readyz') return (await options.isReady()) ? writeJson(res, 200, { status: 'ready' }) : writeJson(res, 503, { status: 'journal_unavailable' });
    if (isResourceMetadataPath(path) && options.authenticator.kind === 'jwt' && options.issuer !== undefined) {
      return writeJson(res, 200, resourceMetadata(resourceUrl(), options.issuer));
    }
    const mount = options.mounts?.find((candidate) => path === candidate.prefix || path.startsWith(`${candidate.prefix}/`));
    if (mount !== undefined) return mount.handle(req, res);
    if (path !== MCP_PATH) return writeJsonRpcError(res, 404, -32000, 'Not found: MCP is served at /mcp.', { code: 'not_found' });

    // Authentication, before the body is read and before anything of MCP runs.
    const token = bearerTokenOf(headerOf(req, 'authorization'));
    const auth =
      token === null
        ? ({ ok: false, error: 'invalid_token', description: 'the Authorization header is not a bearer token' } as const)
        : await options.authenticator.authenticate(token);
    if (!auth.ok) {
      logger.info({ reason: auth.description, remote: req.socket.remoteAddress }, 'http request refused: not authenticated');
      req.resume();
      return writeJsonRpcError(
        res,
        401,
        -32001,
        'Unauthorized: a valid bearer token is required.',
        { code: 'unauthorized', reason: auth.description },
        {
          'www-authenticate': challengeFor(auth, metadataUrl()),
        },
      );
    }
    let parsedBody: unknown;
    if (req.method === 'POST') {
      const body = await readMessageBody(req, res, options.maxMessageBytes);
      if (!body.ok) return;
      parsedBody = body.message;
    }
    (req as IncomingMessage & { auth?: unknown }).auth = {
      token: '',
      clientId: auth.principal,
      scopes: [...auth.scopes],
      ...(auth.expiresAt !== undefined ? { expiresAt: auth.expiresAt } : {}),
    };
    await mcp(req, res, parsedBody);
  };

  const server: NodeHttpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, 'http request failed');
      if (!res.headersSent) writeJsonRpcError(res, 500, JSONRPC_INTERNAL_ERROR, 'Internal error.', errorData('internal'));
      else res.destroy();
    });
  });
  const bound = await listenBounded(server, options.host, options.port);
  boundUrl = bound.url;
  return {
    url: boundUrl,
    port: bound.port,
    async close() {
      server.close();
      await legacy.closeAll();
      await modern.close();
      server.closeAllConnections();
    },
  };
}

/**
 * Listens with request times bounded: headers and bodies must arrive in time, so a
 * client trickling bytes cannot hold a socket forever (responses, SSE streams among
 * them, are not limited by this). Resolves with the bound URL once it listens.
 */
export async function listenBounded(server: NodeHttpServer, host: string, port: number): Promise<{ readonly url: string; readonly port: number }> {
  server.headersTimeout = 30_000;
  server.requestTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${hostForUrl}:${address.port}`, port: address.port };
}

/** Loopback names on a loopback bind, the bind address, the public URL's host, and --allowed-host names. */
function allowedHostnamesFor(options: HttpServeOptions, boundUrl: string): string[] {
  const names = new Set<string>(options.allowedHostnames ?? []);
  if (isLoopbackHost(options.host)) for (const name of LOOPBACK_HOSTNAMES) names.add(name);
  if (boundUrl !== '') names.add(new URL(boundUrl).hostname);
  if (options.publicUrl) names.add(new URL(options.publicUrl).hostname);
  return [...names];
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
