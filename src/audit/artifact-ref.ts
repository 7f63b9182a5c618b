// Artifact addresses shared by both stores: toolhost://artifacts/<sha256>.
import { isSha256Hex } from './hash.js';

/** The URI scheme under which artifacts are read with resources/read. */
export const ARTIFACT_URI_PREFIX = 'toolhost://artifacts/';

/** How long an artifact stays readable unless the store is given another ttlMs. */
export const DEFAULT_ARTIFACT_TTL_MS = 24 * 60 * 60 * 1000;

export interface StoredArtifact {
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  /** toolhost://artifacts/<sha256> */
  uri: string;
  /** Byte length. */
  size: number;
}

/** toolhost://artifacts/<sha256> for a hash. */
export function artifactUri(sha256: string): string {
  return `${ARTIFACT_URI_PREFIX}${sha256}`;
}

/** The sha256 named by a bare hash or an artifact URI; undefined for anything else (no path can be smuggled in). */
export function parseArtifactRef(ref: unknown): string | undefined {
  if (typeof ref !== 'string') return undefined;
  const sha = ref.startsWith(ARTIFACT_URI_PREFIX) ? ref.slice(ARTIFACT_URI_PREFIX.length) : ref;
  return isSha256Hex(sha) ? sha : undefined;
}
