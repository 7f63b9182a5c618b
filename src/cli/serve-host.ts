// `toolhost serve`, past its first moment (serve.ts): builds the host, wires
// stdin/stdout (or the early front that already reads them) to the SDK through
// the boundary transport, and shuts down on stdin EOF or SIGTERM: in-flight
// calls cancelled, every child killed, the journal closed, exit 0 within a few
// seconds. stdout carries protocol messages only.
import { ConfigError, formatProblem } from '../config/problem.js';
import { startEventLoopStats } from '../diagnostics/event-loop.js';
import { startStageStats } from '../diagnostics/stage-times.js';
import { createHost } from '../host.js';
import { createLogger, flushLogs, type Logger } from '../log.js';
import { DEFAULT_MAX_MESSAGE_BYTES, maxMessageBytesOf } from '../protocol/message-limits.js';
import type { EarlyStdio } from '../protocol/stdio-early.js';
import { CUSTOM_METHODS } from '../protocol/custom-methods.js';
import { serverHandleOf, serveToolhost, ToolhostServing, type ToolhostServer, type ToolhostServerOptions } from '../protocol/server.js';
import type { serveHttp } from '../protocol/http.js';
import { openJournal } from '../audit/open-journal.js';
import type { ConsoleHandler } from '../console/console-server.js';
import type { HostConfig } from '../host-config.js';
import { AuthConfigError } from '../protocol/auth/auth-config-error.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { SessionCounters } from '../supervisor/session-counters.js';
import type { Supervisor } from '../supervisor/types.js';
import { BoundaryStdioTransport, ProtocolOutput } from '../protocol/stdio.js';
import { takeProtocolChannel } from '../protocol/protocol-fd.js';
import { HOST_FLAGS_HELP, hostFlagsFrom, parseCommandArgs, UsageError } from './args.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, journalFlagFrom, journalKeyFrom } from './journal-flag.js';
import { HostReloader } from './serve-reload.js';
import { buildAuthenticator, HTTP_FLAGS, HTTP_FLAGS_HELP, httpSettingsFrom, type HttpSettings } from './serve-http.js';
import { watchConfig, type ConfigWatch } from './serve-watch.js';
import { packageVersion } from './package-version.js';

const HELP = `Usage: toolhost serve [host flags] [--journal URL] [--max-message-bytes N] [--no-watch] [--otel] [--http HOST:PORT --auth-…]

Serves the tools over the Model Context Protocol on stdin/stdout (newline-delimited
JSON-RPC), to legacy clients (initialize, 2025-11-25 and older) and modern ones
(2026-07-28). Logs go to stderr or --log-file; stdout carries protocol only.
Reload: the manifest folders, the --policy files and the workspace's policies/
are watched, and a change (or SIGHUP) reloads them; the client gets
notifications/tools/list_changed, calls already running finish under the
definitions they started with, and a configuration that does not load is
reported (stderr and the log) while the previous one stays in force. The
session's counters (call budget, failure run, terminal) carry over a reload.
Ends on stdin EOF or SIGTERM: in-flight calls are cancelled, exit code 0.

  --max-message-bytes N   largest inbound message in bytes (default ${DEFAULT_MAX_MESSAGE_BYTES})
  --no-watch              do not watch the files; reload on SIGHUP only
  --otel                  export a span per call and the duration metric over OTLP/HTTP
                          (also on when OTEL_EXPORTER_OTLP_ENDPOINT is set; SPEC section 6.2)
  --console               with --http: serve the operator's web console at /console, signed in
                          with the same tokens (see toolhost console --help)
${JOURNAL_FLAG_HELP}

${HTTP_FLAGS_HELP}

${HOST_FLAGS_HELP}
`;

/** How long in-flight calls get to answer `cancelled` before the host closes anyway. */
const CANCEL_GRACE_MS = 1_500;
/** After this, the process exits whatever is still pending (SPEC: within a few seconds). */
const SHUTDOWN_DEADLINE_MS = 4_000;

/** Runs serve; `early`: the front that already reads stdin and answered `initialize` (stdio only). */
export async function runServe(argv: readonly string[], early?: EarlyStdio): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { 'max-message-bytes': { type: 'string' }, 'no-watch': { type: 'boolean' }, otel: { type: 'boolean' }, console: { type: 'boolean' }, ...JOURNAL_FLAG, ...HTTP_FLAGS },
    0,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const maxMessageBytes = parseMaxMessageBytes(values['max-message-bytes']);
  const flags = { ...hostFlagsFrom(values), journalUrl: journalFlagFrom(values), journalKey: journalKeyFrom(values) };
  const http = httpSettingsFrom(values);
  if (values.console === true && http === undefined) throw new UsageError('--console needs --http HOST:PORT (the console is served beside /mcp)');
  // Asynchronous lines (see createLogger): the end-of-call line no longer blocks the event loop.
  const logger = createLogger({ sync: false, ...(flags.logFile !== undefined ? { file: flags.logFile } : {}) });
  early?.attachLogger(logger);
  // serve.ts starts the early front only when nothing can make this an HTTP server.
  if (early && http) throw new Error('the early stdio front was started for an HTTP server');
  let authenticator;
  try {
    authenticator = http ? await buildAuthenticator(http, logger) : undefined;
  } catch (error) {
    if (!(error instanceof AuthConfigError)) throw error;
    logger.error({ code: error.code, ...error.details }, error.message);
    process.stderr.write(`toolhost serve: ${error.message}\n`);
    return 1;
  }
  const telemetry = await startTelemetry(values.otel === true, logger);
  const writeEventLoopStats = startEventLoopStats();
  const writeStageStats = startStageStats();
  // Listen before the (slow) host build: a SIGTERM during startup still ends cleanly.
  let signalled: StopReason | undefined;
  const signals = waitForSignal().then((reason) => (signalled = reason));
  // The protocol gets a private duplicate of stdout; fd 1 itself now points at stderr,
  // so a stray write to it (a worker tool, a native module, console.log) never reaches the client.
  // The early front took it first thing: its initialize answer goes there.
  const channel = early ? await early.channel : await takeProtocolChannel(logger);
  logger.debug({ fd1: channel.fd1 }, 'protocol moved off file descriptor 1');
  const output = new ProtocolOutput(channel.output, logger);
  // The connection's session: every host a reload builds counts against it (SPEC 5.2).
  const session = new SessionCounters();
  // A host replaces its supervisor when a server started in the background lists its tools
  // (or lists them again after its tools/list_changed): the client is told once it is in force.
  let onSupervisorReplaced = (_host: Host): void => undefined;
  let previous: Host | undefined;
  const build = async (): Promise<Host | undefined> => {
    const built = await buildHost(flags, logger, session, previous?.listings());
    built?.onSupervisorReplaced(() => onSupervisorReplaced(built));
    if (built) previous = built;
    return built;
  };
  const host = await build();
  if (!host) return 1;
  if (signalled) {
    await host.close();
    return 0;
  }

  const servingOptions: ToolhostServerOptions = {
    supervisor: host.supervisor,
    logger,
    serverInfo: { name: 'toolhost', version: packageVersion() },
    registerMethods: CUSTOM_METHODS,
    ...(telemetry ? { telemetry } : {}),
    // Servers start in the background: tools/list and a call of one of their tools wait for them.
    whenToolsListed: () => currentHost().whenServersListed(),
    whenToolReady: (name) => currentHost().whenToolReady(name),
  };
  let server: ToolhostServer;
  let inputEnded: Promise<StopReason>;
  // Set once the reloader exists: /readyz asks the host in force.
  let currentHost: () => Host = () => host;
  let consoleMount: ServedConsole | undefined;
  if (http && authenticator) {
    // The console reads the journal through a reader of its own: it outlives every reload of the host.
    consoleMount = values.console === true ? await startConsole(flags, http, authenticator, () => currentHost().config, logger) : undefined;
    const served = await serveOverHttp(http, authenticator, servingOptions, maxMessageBytes, () => currentHost().isJournalReady(), logger, consoleMount?.handler);
    if (!served) {
      await consoleMount?.close();
      await host.close();
      return 1;
    }
    server = served;
    // stdin is not the protocol channel here: its end does not stop the host.
    inputEnded = new Promise<StopReason>(() => undefined);
  } else {
    const transport = new BoundaryStdioTransport({ input: early ?? process.stdin, output, maxMessageBytes, logger });
    inputEnded = new Promise<StopReason>((resolve) => (transport.onInputEnd = () => resolve('eof')));
    server = serveToolhost(transport, servingOptions);
  }
  const hosts = new HostReloader<Host, Supervisor>(host, {
    build,
    swap: (next) => server.replaceSupervisor(next),
    whenIdle: (supervisor) => server.whenIdle(supervisor),
    logger,
  });
  currentHost = () => hosts.current;
  onSupervisorReplaced = (replaced) => {
    if (replaced !== hosts.current) return;
    logger.info({ tools: replaced.supervisor.listTools().length }, 'upstream server tools in force');
    void server.replaceSupervisor(replaced.supervisor);
  };
  // A server that listed while the front was being set up: its tools are in force from here.
  if (servingOptions.supervisor !== host.supervisor) onSupervisorReplaced(host);
  const reload = (): void => {
    logger.info('SIGHUP: reloading manifests and policies');
    hosts.reload();
  };
  process.on('SIGHUP', reload);
  const watcher: ConfigWatch | undefined =
    values['no-watch'] === true
      ? undefined
      : watchConfig({
          manifestDirs: flags.manifestDirs,
          policyFiles: flags.policyFiles,
          workspace: flags.workspace,
          // The host writes these itself: watching them would reload forever.
          ignore: [flags.stateDir, ...(flags.logFile !== undefined ? [flags.logFile] : [])],
          onChange: () => {
            logger.info('configuration files changed: reloading manifests and policies');
            hosts.reload();
          },
          logger,
        });
  if (!http) logger.info({ tools: host.supervisor.listTools().length, maxMessageBytes }, 'serving MCP on stdio');

  const reason = await Promise.race([signals, inputEnded]);
  logger.info({ reason, inFlight: server.inFlightCount }, 'shutting down');
  writeEventLoopStats();
  writeStageStats();
  // A stuck close must not keep the host alive: the deadline exits regardless.
  setTimeout(() => {
    logger.warn('shutdown deadline reached; exiting');
    process.exit(0);
  }, SHUTDOWN_DEADLINE_MS).unref();
  process.off('SIGHUP', reload);
  watcher?.close();
  consoleMount?.handler.close();
  await server.cancelInFlight(CANCEL_GRACE_MS);
  // Closing a host closes its supervisor: children killed, journal closed.
  await hosts.close();
  await server.close().catch((error: unknown) => logger.warn({ err: String(error) }, 'server close failed'));
  await consoleMount?.close();
  await telemetry?.shutdown().catch((error: unknown) => logger.warn({ err: String(error) }, 'telemetry shutdown failed'));
  logger.info('stopped');
  await flushLogs(logger);
  return 0;
}

/** Parses `--max-message-bytes`: a positive integer number of bytes. */
function parseMaxMessageBytes(value: unknown): number {
  const bytes = maxMessageBytesOf(value);
  if (bytes === undefined) throw new UsageError('--max-message-bytes must be a positive integer (bytes)');
  return bytes;
}

type Host = Awaited<ReturnType<typeof createHost>>;

/** The HTTP front (SPEC section 6.1); undefined after reporting why it could not listen. */
async function serveOverHttp(
  http: HttpSettings,
  authenticator: Parameters<typeof serveHttp>[0]['authenticator'],
  options: ToolhostServerOptions,
  maxMessageBytes: number,
  isReady: () => Promise<boolean>,
  logger: Logger,
  consoleHandler?: ConsoleHandler,
): Promise<ToolhostServer | undefined> {
  const serving = new ToolhostServing(options);
  let listening;
  try {
    // The HTTP front's modules load only when it is asked for: a stdio host answers sooner without them.
    const { serveHttp } = await import('../protocol/http.js');
    listening = await serveHttp({
      serving,
      host: http.host,
      port: http.port,
      authenticator,
      ...(http.auth.kind === 'jwt' ? { issuer: http.auth.issuer } : {}),
      ...(http.publicUrl !== undefined ? { publicUrl: http.publicUrl } : {}),
      allowedHostnames: http.allowedHostnames,
      maxMessageBytes,
      isReady,
      logger,
      ...(consoleHandler !== undefined ? { mounts: [{ prefix: consoleHandler.base, handle: (req, res) => consoleHandler.handle(req, res) }] } : {}),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.error({ err: message, host: http.host, port: http.port }, 'cannot listen');
    process.stderr.write(`toolhost serve: cannot listen on ${http.host}:${http.port}: ${message}\n`);
    return undefined;
  }
  // The one line a supervisor script or a test reads to learn the port (stderr, never stdout).
  logger.info(
    {
      url: `${listening.url}/mcp`,
      auth: authenticator.kind,
      tools: options.supervisor.listTools().length,
      maxMessageBytes,
      ...(consoleHandler ? { console: `${listening.url}${consoleHandler.base}` } : {}),
    },
    'serving MCP over HTTP',
  );
  return serverHandleOf(serving, () => listening.close());
}

interface ServedConsole {
  readonly handler: ConsoleHandler;
  close(): Promise<void>;
}

/** The web console beside /mcp (SPEC section 7.4): its own reader of the journal, the tools of the host in force. */
async function startConsole(
  flags: ReturnType<typeof hostFlagsFrom> & { journalUrl: string | undefined },
  http: HttpSettings,
  authenticator: Parameters<typeof serveHttp>[0]['authenticator'],
  config: () => HostConfig,
  logger: Logger,
): Promise<ServedConsole> {
  const [{ createConsole }, { consoleToolsOf }] = await Promise.all([import('../console/console-server.js'), import('./console-tools.js')]);
  const journal = await openJournal({ url: flags.journalUrl, stateDir: flags.stateDir, asHost: false });
  const handler = createConsole({
    journal,
    authenticator,
    tools: consoleToolsOf(config),
    logger,
    ...(http.publicUrl !== undefined ? { publicOrigins: [new URL(http.publicUrl).origin], secureCookies: http.publicUrl.startsWith('https:') } : {}),
  });
  return {
    handler,
    async close() {
      handler.close();
      await journal.close();
    },
  };
}

/** The OpenTelemetry exporter, imported only when asked for (free when off). */
async function startTelemetry(flag: boolean, logger: Logger): Promise<Telemetry | undefined> {
  const endpoint = process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  if (!flag && (endpoint === undefined || endpoint === '')) return undefined;
  const { startOtelTelemetry } = await import('../telemetry/otel.js');
  return startOtelTelemetry({ serviceVersion: packageVersion(), logger });
}

/** The host, or undefined after printing why the configuration does not load (createHost logs exclusions). */
async function buildHost(
  flags: ReturnType<typeof hostFlagsFrom> & { journalUrl: string | undefined; journalKey: string | undefined },
  logger: Logger,
  session: SessionCounters,
  knownListings: ReturnType<Host['listings']> | undefined,
): Promise<Host | undefined> {
  try {
    return await createHost({
      session,
      manifestDirs: flags.manifestDirs,
      policyFiles: flags.policyFiles,
      workspace: flags.workspace,
      stateDir: flags.stateDir,
      ...(flags.configDir !== undefined ? { configDir: flags.configDir } : {}),
      ...(flags.journalUrl !== undefined ? { journalUrl: flags.journalUrl } : {}),
      ...(flags.journalKey !== undefined ? { journalKeyFile: flags.journalKey } : {}),
      ...(flags.logFile !== undefined ? { logFile: flags.logFile } : {}),
      logger,
      startSpawnerAhead: true,
      startIsolatesAhead: true,
      journalWriterThread: true,
      // `initialize` is answered at once; each server's tools appear as it lists them.
      startServers: 'background',
      ...(knownListings !== undefined ? { knownListings } : {}),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) {
      logger.error({ file: problem.file, line: problem.line, col: problem.col, reason: problem.reason }, 'configuration problem');
      process.stderr.write(`${formatProblem(problem)}\n`);
    }
    return undefined;
  }
}

type StopReason = 'eof' | 'SIGTERM' | 'SIGINT';

/**
 * The first SIGTERM or SIGINT stops the host; later ones are ignored while it stops
 * (the shutdown deadline bounds it). A terminal's Ctrl-C reaches every process of the
 * foreground group, so one keypress can arrive twice (once from the terminal, once
 * relayed by bin/toolhost.js): the second must not kill the host mid-shutdown with
 * Node's default action, which would leave calls unanswered and journaled as interrupted.
 */
function waitForSignal(): Promise<StopReason> {
  return new Promise((resolve) => {
    process.on('SIGTERM', () => resolve('SIGTERM'));
    process.on('SIGINT', () => resolve('SIGINT'));
  });
}
