// --auth-tokens FILE (SPEC section 6.1): named SHA-256 hashes, the file's mode
// checked like the state folder, every hostile line refused with its number,
// and a token found (or not) by comparing against every hash.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthConfigError } from '../../../../src/protocol/auth/auth-config-error.js';
import { hashToken, loadTokenFile, tokenAuthenticator } from '../../../../src/protocol/auth/token-file.js';

let dir: string | undefined;

afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function tokenFile(text: string, mode = 0o600): string {
  dir ??= mkdtempSync(join(tmpdir(), 'toolhost-tokens-'));
  const file = join(dir, 'tokens');
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

function refusal(action: () => unknown): { code: string; details: Readonly<Record<string, unknown>> } {
  try {
    action();
  } catch (error) {
    if (error instanceof AuthConfigError) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error('expected an AuthConfigError');
}

describe('tokenAuthenticator', () => {
  const file = () => tokenFile(`# comment\n\nalice: ${hashToken('alice-token')}\nci-bot:${hashToken('ci-token').toUpperCase()}\n`);

  it('names the principal of a known token, refuses others', async () => {
    const auth = tokenAuthenticator(loadTokenFile(file()));
    expect(await auth.authenticate('alice-token')).toMatchObject({ ok: true, principal: 'alice' });
    expect(await auth.authenticate('ci-token')).toMatchObject({ ok: true, principal: 'ci-bot' });
    expect(await auth.authenticate('alice-token ')).toMatchObject({ ok: false, error: 'invalid_token' });
    expect(await auth.authenticate(hashToken('alice-token'))).toMatchObject({ ok: false, error: 'invalid_token' });
    // No credentials at all: a challenge without an error code (RFC 6750 section 3.1).
    expect(await auth.authenticate(undefined)).toEqual({ ok: false, description: 'a bearer token is required' });
  });
});

describe('loadTokenFile refuses', () => {
  it.each([
    ['a file others can write', () => tokenFile(`alice: ${hashToken('x')}\n`, 0o622), 'auth_tokens_insecure', { mode: '622' }],
    ['a line without a hash', () => tokenFile('alice: not-a-hash\n'), 'auth_tokens_invalid', { line: 1 }],
    ['a short hash', () => tokenFile(`alice: ${hashToken('x').slice(1)}\n`), 'auth_tokens_invalid', { line: 1 }],
    ['a name with a control character', () => tokenFile(`# ok\n\u001b[2J: ${hashToken('x')}\n`), 'auth_tokens_invalid', { line: 2 }],
    ['a principal named twice', () => tokenFile(`a: ${hashToken('x')}\na: ${hashToken('y')}\n`), 'auth_tokens_invalid', { line: 2 }],
    ['one hash for two principals', () => tokenFile(`a: ${hashToken('x')}\nb: ${hashToken('x')}\n`), 'auth_tokens_invalid', { line: 2 }],
    ['a file with no token', () => tokenFile('# nobody\n'), 'auth_tokens_invalid', {}],
    ['a missing file', () => join(tmpdir(), 'toolhost-no-such-token-file'), 'auth_tokens_unreadable', {}],
  ])('%s', (_name, make, code, details) => {
    expect(refusal(() => loadTokenFile(make()))).toEqual({ code, details });
  });
});
