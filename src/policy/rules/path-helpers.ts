// `path.within(p, glob, ...)` and `path.under(p, dir)` for policy rules (SPEC
// section 4.1): a path argument as the tool resolves it from its first
// workspace root, with `..`, absolute paths and symbolic links resolved, so a
// rule judges where the bytes land, not how the path is spelled.
//
// The kernel resolves `..` after a symbolic link physically (the parent of the
// link's target), Node's path.resolve lexically (the parent of the link): a
// tool that hands the raw string to open() and one that normalises it first
// reach different files. Both readings are computed; when they differ the
// helper throws, and the rule fails closed, rather than guess which one the
// tool uses.
import { lstatSync, readlinkSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { matchGlob } from '../globs.js';

/** Longest path a helper accepts (Linux's PATH_MAX); longer is an error, never a match. */
export const MAX_RULE_PATH_CHARS = 4096;
/** Symbolic links followed in one resolution before it counts as a loop (Linux's MAXSYMLINKS). */
const MAX_SYMLINK_HOPS = 40;

/** Why a path cannot be judged; the rule that asked fails closed. */
export class PathHelperError extends Error {
  constructor(readonly reason: 'invalid_path' | 'too_long' | 'symlink_loop' | 'ambiguous_dotdot', message: string) {
    super(message);
    this.name = 'PathHelperError';
  }
}

/** Where relative paths start and what globs are relative to. */
export interface PathBase {
  /** The tool's first workspace root (absolute, symlinks resolved); the workspace when it has none. */
  readonly root: string;
  /** The host's workspace (absolute, symlinks resolved): globs and dirs are relative to it. */
  readonly workspace: string;
}

/** The absolute path `p` names for a tool whose relative paths start at `base.root`, links resolved. */
export function resolveToolPath(p: unknown, base: PathBase): string {
  const text = checkPath(p);
  const raw = isAbsolute(text) ? text : `${base.root}/${text}`;
  const physical = resolvePhysically(raw);
  // The lexical reading: `..` removed first (path.resolve), then links resolved.
  const lexical = resolvePhysically(resolve(raw));
  if (physical !== lexical) {
    throw new PathHelperError('ambiguous_dotdot', 'the path has ".." after a symbolic link: it names one file to the kernel and another to a tool that normalises it first');
  }
  return physical;
}

/** True when the resolved path matches one of the globs (relative to the workspace, or absolute). */
export function isPathWithin(p: unknown, globs: readonly string[], base: PathBase): boolean {
  const resolved = resolveToolPath(p, base);
  const rel = relative(base.workspace, resolved).split(sep).join('/');
  const inside = rel === '' || (!rel.startsWith('../') && rel !== '..' && !isAbsolute(rel));
  return globs.some((glob) => {
    if (isAbsolute(glob)) return matchesPathGlob(glob, resolved);
    return inside && matchesPathGlob(normaliseGlob(glob), rel === '' ? '.' : rel);
  });
}

/** True when the resolved path is `dir` or inside it (`dir` resolved the same way, from the workspace). */
export function isPathUnder(p: unknown, dir: unknown, base: PathBase): boolean {
  const resolved = resolveToolPath(p, base);
  const folder = resolveToolPath(dir, { root: base.workspace, workspace: base.workspace });
  if (resolved === folder) return true;
  return resolved.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
}

// `dir/**` also names `dir` itself: a rule that protects a folder protects its removal too.
function matchesPathGlob(glob: string, path: string): boolean {
  if (matchGlob(glob, path, { path: true })) return true;
  return glob.endsWith('/**') && glob.length > 3 && matchGlob(glob.slice(0, -3), path, { path: true });
}

// `./docs/**` and `docs/**` are the same glob; a glob never starts with the folder itself.
function normaliseGlob(glob: string): string {
  let normalised = glob;
  while (normalised.startsWith('./')) normalised = normalised.slice(2);
  return normalised === '' ? '.' : normalised;
}

function checkPath(p: unknown): string {
  if (typeof p !== 'string' || p === '' || p.includes('\0')) throw new PathHelperError('invalid_path', 'the path must be a non-empty string without NUL');
  if (p.length > MAX_RULE_PATH_CHARS) throw new PathHelperError('too_long', `the path is longer than ${MAX_RULE_PATH_CHARS} characters`);
  return p;
}

/**
 * Resolves an absolute path the way the kernel walks it: component by component, a
 * symbolic link replaced by its target, `..` taken from what was resolved so far.
 * From the first component that does not exist, the rest is appended lexically
 * (a tool that creates it creates plain folders, not links).
 */
function resolvePhysically(absolute: string): string {
  const pending = absolute.split('/').reverse();
  let resolved = '/';
  let hops = 0;
  let missing = false;
  while (pending.length > 0) {
    const part = pending.pop() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      resolved = resolve(resolved, '..');
      continue;
    }
    const candidate = join(resolved, part);
    if (missing) {
      resolved = candidate;
      continue;
    }
    let isLink = false;
    try {
      isLink = lstatSync(candidate).isSymbolicLink();
    } catch {
      missing = true;
      resolved = candidate;
      continue;
    }
    if (!isLink) {
      resolved = candidate;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) throw new PathHelperError('symlink_loop', 'too many symbolic links on the way');
    const target = readlinkSync(candidate);
    if (isAbsolute(target)) resolved = '/';
    for (const piece of target.split('/').reverse()) pending.push(piece);
  }
  return resolved;
}
