// An authentication setting that cannot be used: `serve --http` stops at start
// (exit 1) with the message, rather than serve with weaker authentication.

type AuthConfigCode = 'auth_tokens_invalid' | 'auth_tokens_unreadable' | 'auth_tokens_insecure' | 'auth_jwks_invalid' | 'auth_flags';

export class AuthConfigError extends Error {
  constructor(
    readonly code: AuthConfigCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = 'AuthConfigError';
  }
}
