// OAuth 2.1 bearer JWTs (SPEC section 6.1), verified with jose against the
// identity provider's JWKS: signature by a key of the set, issuer, audience,
// expiry (required), and an allowlist of asymmetric algorithms, so neither
// `alg: none` nor an HMAC made with a public key can pass. The principal is
// the token's `sub`.
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { AuthConfigError } from './auth-config-error.js';
import type { Authenticator, AuthResult } from './authenticator.js';

/** Asymmetric only: a symmetric algorithm would let a JWKS's public key sign tokens. */
const ALLOWED_JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** Clock skew tolerated for exp and nbf, in seconds. */
const CLOCK_TOLERANCE_S = 30;

interface JwtAuthOptions {
  readonly issuer: string;
  readonly audience: string;
  /** `https://…` (fetched and cached by jose) or a JWKS file path. */
  readonly jwks: string;
}

/** Builds the JWT authenticator; throws AuthConfigError when the JWKS file does not load. */
export function jwtAuthenticator(options: JwtAuthOptions): Authenticator {
  const keys = keySetFrom(options.jwks);
  return {
    kind: 'jwt',
    async authenticate(token): Promise<AuthResult> {
      if (token === undefined) return { ok: false, description: 'a bearer token is required' };
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms: [...ALLOWED_JWT_ALGORITHMS],
          requiredClaims: ['exp', 'sub'],
          clockTolerance: CLOCK_TOLERANCE_S,
        });
        const principal = payload.sub;
        if (typeof principal !== 'string' || principal === '' || principal.length > 256) {
          return { ok: false, error: 'invalid_token', description: 'the token has no usable subject' };
        }
        const scope = typeof payload['scope'] === 'string' ? payload['scope'].split(' ').filter(Boolean) : [];
        return { ok: true, principal, scopes: scope, ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp } : {}) };
      } catch (error) {
        return { ok: false, error: 'invalid_token', description: describeJoseError(error) };
      }
    },
  };
}

function keySetFrom(jwks: string): JWTVerifyGetKey {
  if (/^https?:\/\//i.test(jwks)) return createRemoteJWKSet(new URL(jwks));
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(jwks, 'utf8'));
  } catch (error) {
    throw new AuthConfigError('auth_jwks_invalid', `Cannot read the JWKS file ${jwks}: ${error instanceof Error ? error.message : String(error)}.`, {});
  }
  const keys = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>)['keys'] : undefined;
  if (!Array.isArray(keys) || keys.length === 0) throw new AuthConfigError('auth_jwks_invalid', `The JWKS file ${jwks} has no "keys" array.`, {});
  return createLocalJWKSet(parsed as Parameters<typeof createLocalJWKSet>[0]);
}

// The challenge says what was wrong in general terms, never the token or the claims' values.
function describeJoseError(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `the token's ${error.claim} claim is not accepted`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm this server does not accept';
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) return 'the token is not signed by a key of the issuer';
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return 'the token is not a well-formed JWT';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JOSEError) return 'the token could not be verified';
  return 'the token could not be verified';
}
