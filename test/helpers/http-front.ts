// The HTTP front of `serve --http` in the test's own process, in front of a
// test host's supervisor: loopback, no authentication, a 1 MiB body cap.
import type { Host } from '../../src/host.js';
import { createSilentLogger, type Logger } from '../../src/log.js';
import { noAuthentication } from '../../src/protocol/auth/authenticator.js';
import { serveHttp, type HttpServer, type HttpServeOptions } from '../../src/protocol/http.js';
import { ToolhostServing } from '../../src/protocol/server.js';
import type { Telemetry } from '../../src/telemetry/telemetry.js';

export interface HttpFrontOptions {
  /** The HTTP front's logger (the serving layer's stays silent). */
  readonly logger?: Logger;
  readonly telemetry?: Telemetry;
  readonly legacySessionIdleMs?: HttpServeOptions['legacySessionIdleMs'];
}

/** Serves `host` over Streamable HTTP on 127.0.0.1 at a free port; close() it after. */
export function serveHostOverHttp(host: Host, options: HttpFrontOptions = {}): Promise<HttpServer> {
  const serving = new ToolhostServing({
    supervisor: host.supervisor,
    logger: createSilentLogger(),
    serverInfo: { name: 'toolhost', version: 'test' },
    ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}),
  });
  return serveHttp({
    serving,
    host: '127.0.0.1',
    port: 0,
    authenticator: noAuthentication(),
    maxMessageBytes: 1 << 20,
    isReady: () => host.isJournalReady(),
    logger: options.logger ?? createSilentLogger(),
    ...(options.legacySessionIdleMs !== undefined ? { legacySessionIdleMs: options.legacySessionIdleMs } : {}),
  });
}
