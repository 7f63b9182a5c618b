// The authentication seam of `serve --http` (SPEC section 6.1): one bearer
// token in, a principal or a refusal out. Every failure is a refusal (fail
// closed); the HTTP layer turns it into 401 with a WWW-Authenticate challenge
// before anything of the request runs.

/** Why a request was refused; `error` is RFC 6750's code, absent when no credentials came at all. */
interface AuthRefusal {
  readonly ok: false;
  readonly error?: 'invalid_token';
  /** For the challenge's error_description: never echoes the token. */
  readonly description: string;
}

export type AuthResult = { readonly ok: true; readonly principal: string; readonly expiresAt?: number; readonly scopes: readonly string[] } | AuthRefusal;

export interface Authenticator {
  /** `tokens` (a named-token file), `jwt` (OAuth 2.1 bearer JWTs) or `none` (--no-auth, loopback only). */
  readonly kind: 'tokens' | 'jwt' | 'none';
  /** Checks the token of an `Authorization: Bearer` header; undefined when the header is absent. */
  authenticate(token: string | undefined): Promise<AuthResult>;
}

/** The principal of every request under --no-auth. */
const ANONYMOUS_PRINCIPAL = 'anonymous';

/** Accepts everyone as `anonymous` (--no-auth; the CLI allows it on a loopback bind only). */
export function noAuthentication(): Authenticator {
  return { kind: 'none', authenticate: async () => ({ ok: true, principal: ANONYMOUS_PRINCIPAL, scopes: [] }) };
}

/** The bearer token of an Authorization header: undefined when absent, null when malformed. */
export function bearerTokenOf(header: string | undefined): string | undefined | null {
  if (header === undefined || header === '') return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match?.[1] ?? null;
}

/** The WWW-Authenticate value for a refusal (RFC 6750 section 3, RFC 9728 section 5.1). */
export function challengeFor(refusal: AuthRefusal, resourceMetadataUrl: string | undefined): string {
  const params = ['realm="toolhost"'];
  if (refusal.error) params.push(`error="${refusal.error}"`, `error_description="${quoteSafe(refusal.description)}"`);
  if (resourceMetadataUrl) params.push(`resource_metadata="${quoteSafe(resourceMetadataUrl)}"`);
  return `Bearer ${params.join(', ')}`;
}

// A quoted-string may not hold `"` or `\` unescaped, nor control characters.
function quoteSafe(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/["\\\u0000-\u001f\u007f]/g, ' ').slice(0, 200);
}
