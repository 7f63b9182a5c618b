// The --http side of `toolhost serve` (SPEC section 6.1): parses the HTTP and
// --auth-* flags, refuses a configuration that would serve without
// authentication anywhere but loopback, and builds the Authenticator.
import type { Logger } from '../log.js';
import { noAuthentication, type Authenticator } from '../protocol/auth/authenticator.js';
import { loadTokenFile, tokenAuthenticator } from '../protocol/auth/token-file.js';
import { isLoopbackHost } from '../protocol/http-guards.js';
import { UsageError } from './args.js';

/** The flags `serve` takes for HTTP, for parseCommandArgs. */
export const HTTP_FLAGS = {
  http: { type: 'string' },
  'auth-tokens': { type: 'string' },
  'auth-issuer': { type: 'string' },
  'auth-audience': { type: 'string' },
  'auth-jwks': { type: 'string' },
  'no-auth': { type: 'boolean' },
  'public-url': { type: 'string' },
  'allowed-host': { type: 'string', multiple: true },
  stdio: { type: 'boolean' },
} as const;

export const HTTP_FLAGS_HELP = `HTTP (instead of stdio; SPEC section 6.1):
  --http HOST:PORT        serve MCP Streamable HTTP at http://HOST:PORT/mcp (both eras)
  --auth-tokens FILE      accept bearer tokens named in FILE: one "name: sha256-hex" per line (mode 600)
  --auth-issuer URL       accept OAuth 2.1 bearer JWTs from this issuer (with --auth-audience, --auth-jwks)
  --auth-audience AUD     the audience the JWTs must name (this server's resource identifier)
  --auth-jwks URL|FILE    the issuer's JSON Web Key Set
  --no-auth               no authentication: only on a loopback bind, and with a warning
  --public-url URL        the URL clients reach /mcp at, behind a reverse proxy (RFC 9728 metadata, Host checks)
  --allowed-host NAME     a further name accepted in Host and Origin (repeatable)
  --stdio                 serve stdio even when toolhost.yaml has an http: section`;

export interface HttpSettings {
  readonly host: string;
  readonly port: number;
  readonly publicUrl?: string;
  readonly allowedHostnames: readonly string[];
  readonly auth:
    | { readonly kind: 'tokens'; readonly file: string }
    | { readonly kind: 'jwt'; readonly issuer: string; readonly audience: string; readonly jwks: string }
    | { readonly kind: 'none' };
}

/** The HTTP settings, or undefined for stdio; UsageError for an unusable combination. */
export function httpSettingsFrom(values: Record<string, unknown>): HttpSettings | undefined {
  const text = (key: string): string | undefined => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
  const bind = text('http');
  if (values['stdio'] === true && bind !== undefined) throw new UsageError('--stdio and --http exclude each other');
  const authFlags = ['auth-tokens', 'auth-issuer', 'auth-audience', 'auth-jwks', 'public-url'].filter((key) => text(key) !== undefined);
  if (bind === undefined) {
    if (authFlags.length > 0 || values['no-auth'] === true) throw new UsageError(`--${authFlags[0] ?? 'no-auth'} needs --http HOST:PORT`);
    return undefined;
  }
  const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(bind);
  const port = Number(match?.[2]);
  if (!match || !Number.isInteger(port) || port > 65535) throw new UsageError('--http must be HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one)');
  const host = match[1]!.replace(/^\[|\]$/g, '');
  const tokens = text('auth-tokens');
  const issuer = text('auth-issuer');
  const audience = text('auth-audience');
  const jwks = text('auth-jwks');
  const noAuth = values['no-auth'] === true;
  const jwtGiven = [issuer, audience, jwks].filter((value) => value !== undefined).length;
  if (jwtGiven > 0 && jwtGiven < 3) throw new UsageError('JWT authentication needs all of --auth-issuer, --auth-audience and --auth-jwks');
  const chosen = [tokens !== undefined, jwtGiven === 3, noAuth].filter(Boolean).length;
  if (chosen === 0) throw new UsageError('--http needs authentication: --auth-tokens FILE, or --auth-issuer/--auth-audience/--auth-jwks (or --no-auth on a loopback address)');
  if (chosen > 1) throw new UsageError('choose one of --auth-tokens, the --auth-issuer/--auth-audience/--auth-jwks trio, or --no-auth');
  if (noAuth && !isLoopbackHost(host)) throw new UsageError(`--no-auth is allowed only on a loopback address (127.0.0.1, ::1, localhost), not ${host}`);
  const publicUrl = text('public-url');
  if (publicUrl !== undefined && !URL.canParse(publicUrl)) throw new UsageError('--public-url must be a URL, e.g. https://tools.example.com/mcp');
  const allowedHostnames = Array.isArray(values['allowed-host']) ? values['allowed-host'].map(String) : [];
  return {
    host,
    port,
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    allowedHostnames,
    auth: tokens !== undefined ? { kind: 'tokens', file: tokens } : noAuth ? { kind: 'none' } : { kind: 'jwt', issuer: issuer!, audience: audience!, jwks: jwks! },
  };
}

/** The authenticator of the settings; rejects with AuthConfigError when a token file or JWKS does not load. */
export async function buildAuthenticator(settings: HttpSettings, logger: Logger, command = 'serve'): Promise<Authenticator> {
  switch (settings.auth.kind) {
    case 'tokens':
      return tokenAuthenticator(loadTokenFile(settings.auth.file, logger));
    case 'jwt': {
      // The JOSE library loads only for JWT authentication.
      const { jwtAuthenticator } = await import('../protocol/auth/jwt.js');
      return jwtAuthenticator(settings.auth);
    }
    case 'none':
      logger.warn({ host: settings.host }, '--no-auth: every request on this loopback address is served as principal "anonymous"');
      process.stderr.write(
        `toolhost ${command}: warning: --no-auth: anyone who can reach this loopback address can ${command === 'serve' ? 'call the tools' : 'decide approvals'}\n`,
      );
      return noAuthentication();
  }
}
