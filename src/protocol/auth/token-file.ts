// `--auth-tokens FILE` (SPEC section 6.1): one `name: sha256-hex-of-token`
// per line; the name is the principal. Only hashes are stored, every hash is
// compared in constant time (all of them, so the time does not say which one
// nearly matched), and the file is refused when others could write it: whoever
// can add a line can let themselves in.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Logger } from '../../log.js';
import type { Authenticator, AuthResult } from './authenticator.js';
import { AuthConfigError } from './auth-config-error.js';

/** What a principal name may be: it reaches logs, the journal and policy globs. */
const PRINCIPAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;
const LINE = /^([^:\s]+)\s*:\s*([0-9a-fA-F]{64})\s*$/;

interface NamedTokenHash {
  readonly principal: string;
  readonly hash: Buffer;
}

/** Reads and checks a token file; throws AuthConfigError naming the line at fault. */
export function loadTokenFile(path: string, logger?: Logger): readonly NamedTokenHash[] {
  checkPrivateFile(path, logger);
  const entries: NamedTokenHash[] = [];
  const names = new Set<string>();
  const hashes = new Set<string>();
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const where = `${path}:${index + 1}`;
      const match = LINE.exec(line);
      if (!match) throw new AuthConfigError('auth_tokens_invalid', `${where}: expected "name: <64 hex digits of the token's SHA-256>"`, { line: index + 1 });
      const [, principal, hex] = match as unknown as [string, string, string];
      if (!PRINCIPAL_NAME.test(principal)) {
        throw new AuthConfigError('auth_tokens_invalid', `${where}: a principal name is 1-128 of A-Z a-z 0-9 . _ @ - and starts with a letter or digit`, { line: index + 1 });
      }
      if (names.has(principal)) throw new AuthConfigError('auth_tokens_invalid', `${where}: the principal ${principal} is named twice`, { line: index + 1 });
      if (hashes.has(hex.toLowerCase())) throw new AuthConfigError('auth_tokens_invalid', `${where}: this token hash is already given to another principal`, { line: index + 1 });
      names.add(principal);
      hashes.add(hex.toLowerCase());
      entries.push({ principal, hash: Buffer.from(hex, 'hex') });
    });
  if (entries.length === 0) throw new AuthConfigError('auth_tokens_invalid', `${path} names no token: nobody could connect`, {});
  return Object.freeze(entries);
}

/** An Authenticator over named token hashes. */
export function tokenAuthenticator(entries: readonly NamedTokenHash[]): Authenticator {
  return {
    kind: 'tokens',
    async authenticate(token): Promise<AuthResult> {
      if (token === undefined) return { ok: false, description: 'a bearer token is required' };
      const hash = createHash('sha256').update(token, 'utf8').digest();
      let principal: string | undefined;
      for (const entry of entries) {
        // No early exit: every entry costs the same whether or not an earlier one matched.
        if (timingSafeEqual(hash, entry.hash) && principal === undefined) principal = entry.principal;
      }
      return principal === undefined ? { ok: false, error: 'invalid_token', description: 'the token is not known' } : { ok: true, principal, scopes: [] };
    },
  };
}

/** The SHA-256 hex of a token, as a token file line holds it (`toolhost` docs show the shell equivalent). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

// As the state folder (src/audit/state-dir.ts): ours, and not writable by group or others.
function checkPrivateFile(path: string, logger?: Logger): void {
  let stats;
  try {
    stats = statSync(path);
  } catch (error) {
    throw new AuthConfigError('auth_tokens_unreadable', `Cannot read the token file ${path}: ${error instanceof Error ? error.message : String(error)}.`, {});
  }
  if (!stats.isFile()) throw new AuthConfigError('auth_tokens_unreadable', `The token file ${path} is not a regular file.`, {});
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new AuthConfigError('auth_tokens_insecure', `The token file ${path} belongs to user ${stats.uid}, not to the user running toolhost (${uid}). Use a file of your own.`, {
      ownerUid: stats.uid,
    });
  }
  const mode = stats.mode & 0o777;
  if ((mode & 0o022) !== 0) {
    throw new AuthConfigError(
      'auth_tokens_insecure',
      `The token file ${path} is writable by other users (mode ${mode.toString(8)}), so anyone could add a token. Run \`chmod 600 ${path}\`.`,
      { mode: mode.toString(8) },
    );
  }
  if ((mode & 0o044) !== 0) logger?.warn({ file: path, mode: mode.toString(8) }, 'token file is readable by other users; chmod 600 keeps the principal names private');
}
