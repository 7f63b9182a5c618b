// The Ed25519 key a chain's checkpoints are signed with (SPEC section 7.3).
// Node's crypto does Ed25519, so no library is involved. The private key lives
// in the state folder (created 0600, never replaced) or in a file the operator
// names (`--journal-key FILE`, TOOLHOST_JOURNAL_KEY); its public key is written
// into the journal as the first entry of every chain it signs.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureStateDir } from '../state-dir.js';
import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../hash.js';
import { JournalError } from '../journal-error.js';

/** The key file inside the state folder. */
const CHAIN_KEY_FILE = 'journal-signing-key.pem';
/** The environment variable naming a key file when no flag does. */
const CHAIN_KEY_ENV = 'TOOLHOST_JOURNAL_KEY';

/** A loaded signing key. */
export interface ChainSigner {
  /** First 16 hex digits of the SHA-256 of the raw public key. */
  readonly keyId: string;
  /** Raw 32-byte public key, base64url. */
  readonly publicKey: string;
  /** Ed25519 signature of the UTF-8 text, base64url. */
  sign(text: string): string;
}

/** Where the key of a journal writer lives: the given file, else TOOLHOST_JOURNAL_KEY, else the state folder's. */
export function chainKeyPath(stateDir: string, file?: string, env: NodeJS.ProcessEnv = process.env): { readonly path: string; readonly given: boolean } {
  const given = file ?? (env[CHAIN_KEY_ENV] === '' ? undefined : env[CHAIN_KEY_ENV]);
  return given !== undefined ? { path: given, given: true } : { path: join(stateDir, CHAIN_KEY_FILE), given: false };
}

/**
 * Loads the key at `path`; creates it (0600, atomically: two hosts starting
 * together end up with one key) when it is the state folder's and absent. A
 * given file must exist. A key file others can read or write is refused.
 */
export function loadChainSigner(path: string, create: boolean): ChainSigner {
  let pem: string;
  try {
    checkPrivateFile(path);
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create) throw keyError(path, error);
    createKeyFile(path);
    pem = readFileSync(path, 'utf8');
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw keyError(path, error);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new JournalError('journal_key_invalid', `The journal signing key ${path} is not an Ed25519 private key.`, { file: path });
  }
  return signerOf(privateKey);
}

/** A signer for a key held in memory (tests, the forged-checkpoint check). */
export function signerOf(privateKey: KeyObject): ChainSigner {
  const publicKey = publicKeyText(createPublicKey(privateKey));
  return {
    keyId: keyIdOf(publicKey),
    publicKey,
    sign: (text) => sign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64url'),
  };
}

/** A fresh Ed25519 signer that is never written anywhere. */
export function ephemeralSigner(): ChainSigner {
  return signerOf(generateKeyPairSync('ed25519').privateKey);
}

/** The key id of a base64url raw public key. */
function keyIdOf(publicKey: string): string {
  return sha256Hex(Buffer.from(publicKey, 'base64url')).slice(0, 16);
}

/** True when `signature` is publicKey's Ed25519 signature of `text`. */
export function verifyChainSignature(publicKey: string, text: string, signature: string): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
    return verify(null, Buffer.from(text, 'utf8'), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

/** The base64url raw public key of an Ed25519 key. */
function publicKeyText(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string') throw new TypeError('not an Ed25519 public key');
  return jwk.x;
}

// Written to a temp file, then linked into place: link() fails if another host won, and nobody reads a half-written key.
function createKeyFile(path: string): void {
  // The state folder's key: the folder is the journal's, private to this user (a PostgreSQL host may not have made it yet).
  ensureStateDir(dirname(path));
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const temp = `${path}.${randomUUID()}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, pem);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw keyError(path, error);
  } finally {
    rmSync(temp, { force: true });
  }
}

// A private key others can read is no longer private; one others can write can be swapped.
function checkPrivateFile(path: string): void {
  const stats = statSync(path);
  if (!stats.isFile()) throw new JournalError('journal_key_invalid', `The journal signing key ${path} is not a regular file.`, { file: path });
  const mode = stats.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new JournalError('journal_key_invalid', `The journal signing key ${path} is readable or writable by other users (mode ${mode.toString(8)}). Run \`chmod 600 ${path}\`.`, {
      file: path,
      mode: mode.toString(8),
    });
  }
}

function keyError(path: string, error: unknown): JournalError {
  if (error instanceof JournalError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new JournalError('journal_key_invalid', `Cannot use the journal signing key ${path} (${reason}).`, { file: path }, { cause: error });
}
