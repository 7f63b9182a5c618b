// `toolhost console --http HOST:PORT --journal URL`: the operator's web console
// on its own (SPEC section 7.4), over the journal the hosts write, with the
// same authentication choices as `serve --http` (a token file or an identity
// provider; --no-auth only on loopback). Pending approvals, the live feed, the
// audit search and the tools of the configuration its host flags name.
import { createConsole } from '../console/console-server.js';
import { serveConsoleHttp } from '../console/console-http.js';
import { createLogger, flushLogs } from '../log.js';
import { AuthConfigError } from '../protocol/auth/auth-config-error.js';
import { HOST_FLAGS_HELP, hostFlagsFrom, parseCommandArgs } from './args.js';
import { consoleToolsOf } from './console-tools.js';
import { loadConfigFromFlags } from './host-config-flags.js';
import { JOURNAL_FLAG, JOURNAL_FLAG_HELP, journalFlagFrom, openOperatorJournal } from './journal-flag.js';
import { buildAuthenticator, HTTP_FLAGS, httpSettingsFrom } from './serve-http.js';
import type { HostConfig } from '../host-config.js';

/** Where the console listens when --http is not given. */
const DEFAULT_CONSOLE_BIND = '127.0.0.1:8740';

const HELP = `Usage: toolhost console [--http HOST:PORT] (--auth-tokens FILE | --auth-issuer … | --no-auth) [--journal URL] [host flags]

Serves the operator's web console at http://HOST:PORT/console (default ${DEFAULT_CONSOLE_BIND}):
pending approvals with their arguments and projected effect (approve or deny with
your name and a note, recorded as \`toolhost approve\` records it), a live feed of
calls, the audit search with the chain's verify status, and each tool with its
class, sandbox, pin and the policy's decision. \`toolhost serve --http … --console\`
serves the same console beside /mcp.

Sign in with a token the --auth-tokens file names (or a JWT of the --auth-issuer);
the browser keeps a session cookie (HttpOnly, SameSite=Strict) for 8 hours at most.

  --http HOST:PORT        where to listen (port 0 picks a free one)
  --auth-tokens FILE      accept the tokens named in FILE (one "name: sha256-hex" per line, mode 600)
  --auth-issuer URL, --auth-audience AUD, --auth-jwks URL|FILE
                          accept JWTs of this identity provider
  --no-auth               no sign-in: only on a loopback address, with a warning
  --public-url URL        the URL people reach the console at, behind a reverse proxy
  --allowed-host NAME     a further name accepted in Host and Origin (repeatable)
${JOURNAL_FLAG_HELP}
  --state DIR       the state folder whose journal to read (default: .toolhost)

The tools page reads the manifests and policies the host flags name:
${HOST_FLAGS_HELP}
`;

export async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { ...JOURNAL_FLAG, ...HTTP_FLAGS }, 0);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const http = httpSettingsFrom({ ...values, http: typeof values.http === 'string' ? values.http : DEFAULT_CONSOLE_BIND });
  if (http === undefined) return 2;
  const { stateDir } = hostFlagsFrom(values);
  const logger = createLogger({ sync: false, ...(typeof values['log-file'] === 'string' ? { file: values['log-file'] } : {}) });
  let authenticator;
  try {
    authenticator = await buildAuthenticator(http, logger, 'console');
  } catch (error) {
    if (!(error instanceof AuthConfigError)) throw error;
    process.stderr.write(`toolhost console: ${error.message}\n`);
    return 1;
  }
  const journal = await openOperatorJournal('console', values, stateDir);
  if (journal === undefined) return 1;
  let config: HostConfig | undefined;
  let why: string | undefined;
  try {
    config = loadConfigFromFlags(values);
  } catch (error) {
    why = `The manifests and policies did not load: ${error instanceof Error ? error.message : String(error)}`;
  }
  const handler = createConsole({
    journal,
    authenticator,
    tools: consoleToolsOf(() => config, why),
    logger,
    ...(http.publicUrl !== undefined ? { publicOrigins: [new URL(http.publicUrl).origin], secureCookies: http.publicUrl.startsWith('https:') } : {}),
  });
  let server;
  try {
    server = await serveConsoleHttp({
      console: handler,
      host: http.host,
      port: http.port,
      ...(http.publicUrl !== undefined ? { publicUrl: http.publicUrl } : {}),
      allowedHostnames: http.allowedHostnames,
      logger,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`toolhost console: cannot listen on ${http.host}:${http.port}: ${message}\n`);
    handler.close();
    await journal.close();
    return 1;
  }
  // The one line a supervisor script or a test reads to learn the port (stderr, never stdout).
  logger.info(
    { url: `${server.url}${handler.base}`, auth: authenticator.kind, journal: journal.location, journalFlag: journalFlagFrom(values) ?? null },
    'serving the console over HTTP',
  );
  const reason = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info({ reason }, 'console stopping');
  await server.close();
  await journal.close();
  await flushLogs(logger);
  return 0;
}
