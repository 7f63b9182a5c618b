// Types for scoped-fs.mjs (ctx.fs of isolate and worker tools).

export interface ScopedFsRoot {
  /** Absolute, symlink-resolved path. */
  readonly path: string;
  readonly access: 'read' | 'read_write';
}

export interface ScopedFsDenial {
  readonly op: string;
  /** The path as the tool gave it, at most 512 characters. */
  readonly target: string;
  readonly reason: string;
}

export interface ScopedFsOptions {
  /** Relative paths resolve against the first root; no roots means every call is refused. */
  readonly roots: readonly ScopedFsRoot[];
  /** Absolute, symlink-resolved paths no write may touch (nor anything under them); default none. */
  readonly protectedPaths?: readonly string[];
  /** Absolute, symlink-resolved paths no operation may touch, reads included; default none. */
  readonly hiddenPaths?: readonly string[];
  /** Called once per refused attempt, before the error is thrown. */
  readonly onDenied?: (denial: ScopedFsDenial) => void;
  /** Default 16 MiB. */
  readonly maxReadBytes?: number;
  /** Default 16 MiB. */
  readonly maxWriteBytes?: number;
  /** Default 10,000. */
  readonly maxListEntries?: number;
}

export type FsEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface FsEntry {
  readonly name: string;
  readonly type: FsEntryType;
  /** Bytes for regular files, 0 for everything else. */
  readonly size: number;
}

export interface FsStat {
  readonly type: FsEntryType;
  /** Bytes for regular files, 0 for everything else. */
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * Errors thrown carry a string `code`: `policy_denied` (refused by the sandbox),
 * `not_found`, `not_a_file`, `not_a_directory`, `too_large`, `permission_denied`,
 * `symlink_loop`, `invalid_argument`, `io_error`. Messages never hold a host path
 * the tool did not name itself.
 */
export interface ScopedFs {
  readText(path: string): Promise<string>;
  writeText(path: string, text: string): Promise<{ bytes: number }>;
  list(path: string): Promise<FsEntry[]>;
  stat(path: string): Promise<FsStat>;
}

export const DEFAULT_MAX_READ_BYTES: number;
export const DEFAULT_MAX_WRITE_BYTES: number;
export const DEFAULT_MAX_LIST_ENTRIES: number;

export function createScopedFs(options: ScopedFsOptions): ScopedFs;
export function findRoot<R extends { readonly path: string }>(roots: readonly R[], absolute: string): R | undefined;
