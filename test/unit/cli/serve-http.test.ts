// The --http flags of `toolhost serve` (SPEC section 6.1): authentication is
// required, exactly one kind of it, and --no-auth only on a loopback bind.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/args.js';
import { httpSettingsFrom } from '../../../src/cli/serve-http.js';

function refusal(values: Record<string, unknown>): string {
  try {
    httpSettingsFrom(values);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('expected a UsageError');
}

describe('httpSettingsFrom', () => {
  it('is undefined for stdio', () => {
    expect(httpSettingsFrom({})).toBeUndefined();
  });

  it('reads tokens, JWT and loopback --no-auth settings', () => {
    expect(httpSettingsFrom({ http: '127.0.0.1:0', 'auth-tokens': 't' })).toMatchObject({ host: '127.0.0.1', port: 0, auth: { kind: 'tokens', file: 't' } });
    expect(httpSettingsFrom({ http: '0.0.0.0:8080', 'auth-issuer': 'https://i', 'auth-audience': 'a', 'auth-jwks': 'https://i/jwks' })).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      auth: { kind: 'jwt', issuer: 'https://i', audience: 'a', jwks: 'https://i/jwks' },
    });
    expect(httpSettingsFrom({ http: '[::1]:9000', 'no-auth': true })).toMatchObject({ host: '::1', auth: { kind: 'none' } });
  });

  it.each([
    [{ http: '0.0.0.0:8080' }, 'needs authentication'],
    [{ http: '0.0.0.0:8080', 'no-auth': true }, 'only on a loopback address'],
    [{ http: '192.168.1.5:8080', 'no-auth': true }, 'only on a loopback address'],
    [{ http: '127.0.0.1:1', 'auth-issuer': 'https://i' }, 'needs all of'],
    [{ http: '127.0.0.1:1', 'auth-tokens': 't', 'no-auth': true }, 'choose one'],
    [{ http: 'localhost' }, 'HOST:PORT'],
    [{ http: '127.0.0.1:70000', 'auth-tokens': 't' }, 'HOST:PORT'],
    [{ 'auth-tokens': 't' }, 'needs --http'],
  ])('refuses %j', (values, message) => {
    expect(refusal(values)).toContain(message);
  });
});
