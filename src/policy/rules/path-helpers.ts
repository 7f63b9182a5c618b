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
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { globRegExp } from '../globs.js';

/** Longest path a helper accepts (Linux's PATH_MAX); longer is an error, never a match. */
const MAX_RULE_PATH_CHARS = 4096;
/** Symbolic links followed in one resolution before it counts as a loop (Linux's MAXSYMLINKS). */
const MAX_SYMLINK_HOPS = 40;

/** Why a path cannot be judged; the rule that asked fails closed. */
export class PathHelperError extends Error {
  constructor(
    readonly reason: 'invalid_path' | 'too_long' | 'symlink_loop' | 'ambiguous_dotdot',
    message: string,
  ) {
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
  const physical = resolvePhysically(raw, base);
  // Without `..` both readings walk the same components: one walk is enough.
  if (!hasDotDot(text)) return physical;
  // The lexical reading: `..` removed first (path.resolve), then links resolved.
  const lexical = resolvePhysically(resolve(raw), base);
  if (physical !== lexical) {
    throw new PathHelperError('ambiguous_dotdot', 'the path has ".." after a symbolic link: it names one file to the kernel and another to a tool that normalises it first');
  }
  return physical;
}

/** Resolves a path for a tool (resolveToolPath, or a memo of it for one call). */
type PathResolver = (p: unknown, base: PathBase) => string;

/** True when the resolved path matches one of the globs (relative to the workspace, or absolute). */
export function isPathWithin(p: unknown, globs: readonly string[], base: PathBase, resolvePath: PathResolver = resolveToolPath): boolean {
  const resolved = resolvePath(p, base);
  const rel = relativeInside(base.workspace, resolved);
  for (const glob of globs) {
    if (isAbsolute(glob) ? globMatcher(glob)(resolved) : rel !== undefined && globMatcher(normaliseGlob(glob))(rel)) return true;
  }
  return false;
}

/** True when the resolved path is `dir` or inside it (`dir` resolved the same way, from the workspace). */
export function isPathUnder(p: unknown, dir: unknown, base: PathBase, resolvePath: PathResolver = resolveToolPath): boolean {
  const resolved = resolvePath(p, base);
  const folder = resolveToolPath(dir, { root: base.workspace, workspace: base.workspace });
  if (resolved === folder) return true;
  return resolved.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
}

const matchers = new Map<string, (path: string) => boolean>();

// `dir/**` also names `dir` itself: a rule that protects a folder protects its removal too.
// Compiled once per glob (rules name the same few globs on every call).
function globMatcher(glob: string): (path: string) => boolean {
  let matcher = matchers.get(glob);
  if (matcher === undefined) {
    const whole = globRegExp(glob, { path: true });
    const folder = glob.endsWith('/**') && glob.length > 3 ? globRegExp(glob.slice(0, -3), { path: true }) : undefined;
    matcher = (path) => whole.test(path) || (folder !== undefined && folder.test(path));
    // Globs come from policy files (bounded by their schema), never from calls: the map stays small.
    matchers.set(glob, matcher);
  }
  return matcher;
}

/** `path` relative to `root` with `/` separators (`.` for the root itself), or undefined outside it. */
function relativeInside(root: string, path: string): string | undefined {
  if (path === root) return '.';
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
}

// `./docs/**` and `docs/**` are the same glob; a glob never starts with the folder itself.
function normaliseGlob(glob: string): string {
  let normalised = glob;
  while (normalised.startsWith('./')) normalised = normalised.slice(2);
  return normalised === '' ? '.' : normalised;
}

// No exception for a missing entry: building one costs more than the lstat itself. A path through
// something that is not a folder (ENOTDIR), or unreadable, leads nowhere the tool can reach either.
function lstatOrMissing(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function hasDotDot(path: string): boolean {
  return path === '..' || path.startsWith('../') || path.endsWith('/..') || path.includes('/../');
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
function resolvePhysically(absolute: string, base: PathBase): string {
  // The roots are real paths already (no link in them): the walk starts below the one the path is in.
  const start = [base.root, base.workspace].find((root) => absolute.startsWith(`${root}/`));
  const pending = (start === undefined ? absolute : absolute.slice(start.length)).split('/').reverse();
  let resolved = start ?? '/';
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
    const info = lstatOrMissing(candidate);
    if (info === undefined) {
      missing = true;
      resolved = candidate;
      continue;
    }
    const isLink = info.isSymbolicLink();
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
