// `toolhost console` on its own: an HTTP server that answers the console under
// /console (and / with a redirect to it), after the same Host and Origin
// checks as `serve --http` (DNS rebinding: a foreign name is 403).
import { createServer, type Server } from 'node:http';
import type { Logger } from '../log.js';
import { checkHostAndOrigin, isLoopbackHost, LOOPBACK_HOSTNAMES } from '../protocol/http-guards.js';
import { listenBounded } from '../protocol/http.js';
import type { ConsoleHandler } from './console-server.js';
import { redirect, SECURITY_HEADERS, send } from './security.js';

interface ConsoleHttpOptions {
  readonly console: ConsoleHandler;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** The URL people reach the console at, behind a reverse proxy. */
  readonly publicUrl?: string;
  /** Further names accepted in Host and Origin. */
  readonly allowedHostnames?: readonly string[];
  readonly logger: Logger;
}

export interface ConsoleHttpServer {
  /** http://HOST:PORT */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the console's own HTTP server; resolves once it listens. */
export async function serveConsoleHttp(options: ConsoleHttpOptions): Promise<ConsoleHttpServer> {
  const names = new Set<string>(options.allowedHostnames ?? []);
  if (isLoopbackHost(options.host)) for (const name of LOOPBACK_HOSTNAMES) names.add(name);
  if (options.publicUrl !== undefined) names.add(new URL(options.publicUrl).hostname);
  const { console: handler, logger } = options;
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://console.invalid').pathname;
    // Set first, so even the Host and Origin refusals carry them.
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (!checkHostAndOrigin(req, res, [...names])) return;
    if (path === '/healthz') return send(res, 200, 'application/json', '{"status":"ok"}');
    if (path === '/' && (req.method === 'GET' || req.method === 'HEAD')) return redirect(res, `${handler.base}/approvals`);
    if (path !== handler.base && !path.startsWith(`${handler.base}/`)) return send(res, 404, 'text/plain; charset=utf-8', 'Not found: the console is at /console.\n');
    handler.handle(req, res).catch((error: unknown) => {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, 'console request failed');
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'Internal error.\n');
      else res.destroy();
    });
  });
  const { url } = await listenBounded(server, options.host, options.port);
  names.add(new URL(url).hostname);
  return {
    url,
    async close() {
      handler.close();
      server.close();
      server.closeAllConnections();
    },
  };
}
