// Content-addressed store for results too large to return inline (SPEC section
// 5 step 9). A file lives at <state>/artifacts/<sha[0..2]>/<sha>, written to a
// temp file and renamed into place; its row (sha256, MIME, bytes, created,
// expires) sits in the journal. Renames and deletions happen inside an
// IMMEDIATE transaction, so the row and the file never disagree across hosts.
import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createSilentLogger, type Logger } from '../../log.js';
import { artifactUri, DEFAULT_ARTIFACT_TTL_MS, parseArtifactRef, type StoredArtifact } from '../artifact-ref.js';
import { isSha256Hex, sha256Hex } from '../hash.js';

import type { SqliteJournal } from './sqlite-journal.js';
import { toJournalError } from './open-database.js';

export { ARTIFACT_URI_PREFIX, artifactUri, DEFAULT_ARTIFACT_TTL_MS, parseArtifactRef, type StoredArtifact } from '../artifact-ref.js';

/** How often put() also sweeps expired artifacts. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

/** A temp file older than this was left by a crash and is removed. */
const STALE_TEMP_MS = 60 * 60 * 1000;

interface ArtifactStoreOptions {
  /** Lifetime of an artifact from its latest put; default 24 hours. */
  ttlMs?: number;
  logger?: Logger;
}

export class ArtifactStore {
  private readonly root: string;
  private readonly ttlMs: number;
  private readonly logger: Logger;
  private lastSweepMs = 0;

  /** Creates <state>/artifacts (0700), then removes expired artifacts and leftovers of crashed writes. */
  constructor(
    stateDir: string,
    private readonly journal: SqliteJournal,
    options: ArtifactStoreOptions = {},
  ) {
    const ttlMs = options.ttlMs ?? DEFAULT_ARTIFACT_TTL_MS;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`ttlMs must be a positive number of milliseconds, got ${ttlMs}`);
    this.ttlMs = ttlMs;
    this.logger = options.logger ?? createSilentLogger();
    this.root = join(stateDir, 'artifacts');
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    this.sweepExpired();
    this.removeStrays();
  }

  /** Stores bytes (deduplicated by content) and returns their address; a repeat put extends the expiry. */
  put(bytes: Uint8Array, mimeType: string): StoredArtifact {
    const now = Date.now();
    if (now - this.lastSweepMs >= SWEEP_INTERVAL_MS) this.sweepExpired(now);
    const sha256 = sha256Hex(bytes);
    const file = this.pathOf(sha256);
    mkdirSync(join(this.root, sha256.slice(0, 2)), { recursive: true, mode: 0o700 });
    // The slow part (write + fsync) happens outside the lock; the rename inside it.
    const temp = join(this.root, sha256.slice(0, 2), `.${sha256}.${randomUUID()}.tmp`);
    writeDurably(temp, bytes);
    try {
      const db = this.journal.database;
      db.transaction(() => {
        db.prepare(
          `INSERT INTO artifacts (sha256, mime_type, size_bytes, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (sha256) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)`,
        ).run(sha256, mimeType, bytes.byteLength, now, now + this.ttlMs);
        renameSync(temp, file);
      }).immediate();
    } catch (error) {
      throw toJournalError(error, this.journal.file);
    } finally {
      rmSync(temp, { force: true });
    }
    return { sha256, uri: artifactUri(sha256), size: bytes.byteLength };
  }

  /** The artifact's bytes and MIME type; undefined when malformed, unknown, expired, missing or damaged. */
  get(sha256OrUri: string, now = Date.now()): { mimeType: string; bytes: Uint8Array } | undefined {
    const sha256 = parseArtifactRef(sha256OrUri);
    if (sha256 === undefined) return undefined;
    const row = this.journal.database.prepare(`SELECT mime_type, expires_at FROM artifacts WHERE sha256 = ?`).get(sha256) as { mime_type: string; expires_at: number } | undefined;
    if (row === undefined || row.expires_at <= now) return undefined;
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.pathOf(sha256));
    } catch (error) {
      this.logger.warn({ sha256, err: error }, 'artifact recorded but its file cannot be read');
      return undefined;
    }
    // Content addressing lets us prove the bytes are the ones stored.
    if (sha256Hex(bytes) !== sha256) {
      this.logger.error({ sha256 }, 'artifact file does not match its hash; refusing to serve it');
      return undefined;
    }
    return { mimeType: row.mime_type, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  }

  /** Deletes expired artifacts (files and rows); returns how many. */
  sweepExpired(now = Date.now()): number {
    this.lastSweepMs = now;
    const db = this.journal.database;
    return db
      .transaction(() => {
        const expired = db.prepare(`SELECT sha256 FROM artifacts WHERE expires_at <= ?`).pluck().all(now) as string[];
        for (const sha256 of expired) rmSync(this.pathOf(sha256), { force: true });
        db.prepare(`DELETE FROM artifacts WHERE expires_at <= ?`).run(now);
        return expired.length;
      })
      .immediate();
  }

  private pathOf(sha256: string): string {
    return join(this.root, sha256.slice(0, 2), sha256);
  }

  // Files without a row (a crash between rename and commit) and old temp
  // files. Under the write lock, so no put can be mid-rename.
  private removeStrays(): void {
    const db = this.journal.database;
    const known = db.prepare(`SELECT 1 FROM artifacts WHERE sha256 = ?`).pluck();
    db.transaction(() => {
      for (const prefix of readdirSync(this.root)) {
        const dir = join(this.root, prefix);
        if (!/^[0-9a-f]{2}$/.test(prefix) || !statSync(dir).isDirectory()) continue;
        for (const name of readdirSync(dir)) {
          const file = join(dir, name);
          const isStaleTemp = name.endsWith('.tmp') && Date.now() - statSync(file).mtimeMs > STALE_TEMP_MS;
          const isOrphan = isSha256Hex(name) && known.get(name) === undefined;
          if (isStaleTemp || isOrphan) {
            this.logger.info({ file: name }, 'removing a stray artifact file');
            rmSync(file, { force: true });
          }
        }
      }
    }).immediate();
  }
}

function writeDurably(file: string, bytes: Uint8Array): void {
  const fd = openSync(file, 'wx', 0o600);
  try {
    let offset = 0;
    while (offset < bytes.byteLength) offset += writeSync(fd, bytes, offset, bytes.byteLength - offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
