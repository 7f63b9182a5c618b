// The host's own configuration and state, as paths a tool must not change
// (SPEC sections 3 and 4). Manifests and policies often live inside the
// workspace, and the state folder defaults to .toolhost/ there: without this, a
// tool with a read_write workspace root could add a tool to its own session,
// loosen a repository policy or rewrite the journal.
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

interface ProtectedPathsInput {
  /** Absolute manifest folders given to the host. */
  readonly manifestDirs: readonly string[];
  /** Absolute organisation policy files. */
  readonly policyFiles: readonly string[];
  /** Absolute workspace (its policies/ folder is the repository layer). */
  readonly workspace: string;
  /** Absolute state folder; absent for commands that never run a tool. */
  readonly stateDir?: string;
  /** Absolute --log-file: a tool must not forge or erase the host's log lines. */
  readonly logFile?: string;
}

export interface ProtectedPaths {
  /** No tool may write these or anything under them. */
  readonly protectedPaths: readonly string[];
  /** No tool may read these either (a subset of protectedPaths). */
  readonly hiddenPaths: readonly string[];
}

/** Every path of the host's own configuration and state, canonical (see canonicalPathOf). */
export function protectedPathsOf(input: ProtectedPathsInput): ProtectedPaths {
  const hidden = input.stateDir !== undefined ? [canonicalPathOf(input.stateDir)] : [];
  const paths = new Set<string>([
    ...input.manifestDirs.map(canonicalPathOf),
    canonicalPathOf(join(input.workspace, 'policies')),
    ...input.policyFiles.map(canonicalPathOf),
    ...(input.logFile !== undefined ? [canonicalPathOf(input.logFile)] : []),
    ...hidden,
  ]);
  return { protectedPaths: [...paths].sort(), hiddenPaths: hidden };
}

/**
 * The path with symlinks resolved; for a path that does not exist yet, its nearest
 * existing parent resolved plus the missing tail, so a folder created later (policies/,
 * the state folder) is still matched by the same comparison as the files under it.
 */
export function canonicalPathOf(path: string): string {
  const tail: string[] = [];
  let probe = resolve(path);
  for (;;) {
    try {
      return join(realpathSync.native(probe), ...tail);
    } catch {
      const parent = dirname(probe);
      if (parent === probe) return resolve(path);
      tail.unshift(basename(probe));
      probe = parent;
    }
  }
}
