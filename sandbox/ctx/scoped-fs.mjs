// ctx.fs for isolate and worker tools: every path is checked against the
// declared workspace roots before anything is opened, and again (through
// /proc/self/fd) after it is opened, so a symlink swapped in between is caught.
// Nothing is used by path after its check: stat and list work on the opened
// descriptor (/proc/self/fd/N names exactly the opened file), and writeText
// creates each missing folder inside a folder it holds open and has verified,
// so a folder swapped for a symlink mid-call leads nowhere outside the roots.
// The host's own configuration and state (protectedPaths) are refused to writes
// even inside a read_write root, and the state folder (hiddenPaths) to reads too.
// Plain ESM with no imports from src/: it runs in the host (isolate callbacks)
// and inside Piscina workers.
import { constants as FS, promises as fsp } from 'node:fs';
import path from 'node:path';

/** Bytes ctx.fs.readText returns at most; a larger file is refused with code `too_large`. */
export const DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024;
/** Bytes ctx.fs.writeText accepts at most. */
export const DEFAULT_MAX_WRITE_BYTES = 16 * 1024 * 1024;
/** Entries ctx.fs.list returns at most; a larger directory is refused with code `too_large`. */
export const DEFAULT_MAX_LIST_ENTRIES = 10_000;

const MAX_TARGET_CHARS = 512;
const MAX_PATH_CHARS = 4096;

/**
 * Builds the ctx.fs object for one call.
 * @param {import('./scoped-fs.d.mts').ScopedFsOptions} options
 * @returns {import('./scoped-fs.d.mts').ScopedFs}
 */
export function createScopedFs(options) {
  const roots = options.roots.map((root) => ({ path: path.resolve(root.path), access: root.access }));
  // Absent (an older caller): nothing beyond the roots' access is enforced.
  const protectedPaths = (options.protectedPaths ?? []).map((entry) => ({ path: path.resolve(entry) }));
  const hiddenPaths = (options.hiddenPaths ?? []).map((entry) => ({ path: path.resolve(entry) }));
  const maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  const maxWriteBytes = options.maxWriteBytes ?? DEFAULT_MAX_WRITE_BYTES;
  const maxListEntries = options.maxListEntries ?? DEFAULT_MAX_LIST_ENTRIES;
  const onDenied = options.onDenied ?? (() => {});

  function deny(op, target, reason) {
    const shown = String(target).slice(0, MAX_TARGET_CHARS);
    try {
      onDenied({ op, target: shown, reason });
    } catch {
      // A failing observer must not turn a refusal into an allow.
    }
    return fsError('policy_denied', `${op} refused for ${JSON.stringify(shown)}: ${REASON_TEXT[reason] ?? reason}`);
  }

  /** Lexical check: the absolute path the request names, or a denial. */
  function resolveRequested(op, requested) {
    // No file system takes a longer path (Linux's PATH_MAX): refused before any work on it.
    if (typeof requested === 'string' && requested.length > MAX_PATH_CHARS) {
      throw fsError('invalid_argument', `${op}: the path is longer than ${MAX_PATH_CHARS} characters`);
    }
    if (typeof requested !== 'string' || requested.includes('\0')) throw deny(op, String(requested), 'invalid_path');
    const first = roots[0];
    if (first === undefined) throw deny(op, requested, 'no_roots');
    if (path.isAbsolute(requested)) {
      const absolute = path.resolve(requested);
      if (findRoot(roots, absolute) === undefined) throw deny(op, requested, 'outside_roots');
      return absolute;
    }
    const absolute = path.resolve(first.path, requested);
    if (findRoot(roots, absolute) === undefined) throw deny(op, requested, 'parent_escape');
    return absolute;
  }

  /** Refuses a path under a guarded one (the host's state for every op, its configuration for writes). */
  function checkGuarded(op, requested, absolute, guarded) {
    if (findRoot(guarded, absolute) !== undefined) throw deny(op, requested, 'protected_path');
  }

  /** Symlink check for an existing path: its real path must stay inside a root. */
  async function resolveExisting(op, requested) {
    const absolute = resolveRequested(op, requested);
    checkGuarded(op, requested, absolute, hiddenPaths);
    const real = await realpathOrThrow(op, requested, absolute);
    const root = findRoot(roots, real);
    if (root === undefined) throw deny(op, requested, 'symlink_outside');
    checkGuarded(op, requested, real, hiddenPaths);
    return { real, root };
  }

  /**
   * Confirms which file an open descriptor really is (closes the check-then-open race);
   * `writable`: it must also lie in a read_write root. Returns whether /proc could tell.
   */
  async function verifyOpened(op, requested, handle, guarded, writable = false) {
    let opened;
    try {
      opened = await fsp.readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      return false; // No /proc (not Linux): the realpath check before open stands alone.
    }
    const root = findRoot(roots, opened);
    const reason =
      root === undefined ? 'symlink_outside' : findRoot(guarded, opened) !== undefined ? 'protected_path' : writable && root.access !== 'read_write' ? 'read_only_root' : undefined;
    if (reason !== undefined) {
      await handle.close().catch(() => {});
      throw deny(op, requested, reason);
    }
    return true;
  }

  /** Opens an existing checked path without following a final symlink, then verifies the descriptor. */
  async function openVerified(op, requested, real, flags, guarded, writable = false) {
    let handle;
    try {
      handle = await fsp.open(real, flags);
    } catch (error) {
      throw openError(op, requested, error);
    }
    const verified = await verifyOpened(op, requested, handle, guarded, writable);
    return { handle, verified };
  }

  /**
   * Why a path that does not resolve is missing: a symbolic link on the way that points
   * outside the roots, or into the host's hidden state (inside the isolate process's
   * namespace neither target exists: the state folder is an empty tmpfs there), is
   * refused as such; otherwise the path is just not there.
   */
  async function explainMissing(op, requested, absolute) {
    const root = findRoot(roots, absolute);
    if (root === undefined) return;
    const parts = path
      .relative(root.path, absolute)
      .split(path.sep)
      .filter((part) => part !== '');
    let probe = root.path;
    for (const part of parts) {
      probe = path.join(probe, part);
      const info = await fsp.lstat(probe).catch(() => undefined);
      if (info === undefined) return;
      if (!info.isSymbolicLink()) continue;
      const reason = await whereLinkLeads(probe);
      if (reason !== undefined) throw deny(op, requested, reason);
    }
  }

  /** Whether a symlink (or a chain of them) leads outside every root or into a hidden path, by its text alone. */
  async function whereLinkLeads(link) {
    let current = link;
    for (let hop = 0; hop < 40; hop += 1) {
      let target;
      try {
        target = await fsp.readlink(current);
      } catch {
        return undefined;
      }
      const next = path.resolve(path.dirname(current), target);
      if (findRoot(roots, next) === undefined) return 'symlink_outside';
      if (findRoot(hiddenPaths, next) !== undefined) return 'protected_path';
      const info = await fsp.lstat(next).catch(() => undefined);
      if (info === undefined || !info.isSymbolicLink()) return undefined;
      current = next;
    }
    return 'symlink_outside';
  }

  /** Whether a symlink (or a chain of them) points outside every root, by its text alone. */
  async function linkLeavesRoots(link) {
    return (await whereLinkLeads(link)) === 'symlink_outside';
  }

  // O_NOFOLLOW fails with ELOOP when the checked real path was swapped for a link.
  function openError(op, requested, error) {
    return errorCode(error) === 'ELOOP' ? deny(op, requested, 'symlink_swapped') : fromIoError(op, requested, error);
  }

  async function realpathOrThrow(op, requested, absolute) {
    try {
      return await fsp.realpath(absolute);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') await explainMissing(op, requested, absolute);
      throw fromIoError(op, requested, error);
    }
  }

  async function readText(requested) {
    const op = 'readText';
    const { real } = await resolveExisting(op, requested);
    const { handle } = await openVerified(op, requested, real, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK, hiddenPaths);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw fsError('not_a_file', `${op}: not a regular file: ${JSON.stringify(requested)}`);
      if (info.size > maxReadBytes) throw tooLarge(op, requested, maxReadBytes);
      // Read at most one byte past the cap so a file that grew after fstat is still refused.
      const buffer = Buffer.alloc(Math.min(info.size, maxReadBytes) + 1);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled > maxReadBytes) throw tooLarge(op, requested, maxReadBytes);
      return new TextDecoder('utf-8').decode(buffer.subarray(0, filled));
    } catch (error) {
      throw isFsError(error) ? error : fromIoError(op, requested, error);
    } finally {
      await handle.close().catch(() => {});
    }
  }

  async function writeText(requested, text) {
    const op = 'writeText';
    if (typeof text !== 'string') throw fsError('invalid_argument', `${op}: text must be a string`);
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length > maxWriteBytes) throw tooLarge(op, requested, maxWriteBytes);
    const absolute = resolveRequested(op, requested);
    checkGuarded(op, requested, absolute, protectedPaths);
    const { real, base, tail } = await resolveForWrite(op, requested, absolute);
    const root = findRoot(roots, real);
    if (root === undefined) throw deny(op, requested, 'symlink_outside');
    checkGuarded(op, requested, real, protectedPaths);
    if (root.access !== 'read_write') throw deny(op, requested, 'read_only_root');
    const handle = await openForWrite(op, requested, real, base, tail);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw fsError('not_a_file', `${op}: not a regular file: ${JSON.stringify(requested)}`);
      await handle.truncate(0);
      await handle.write(bytes, 0, bytes.length, 0);
      return { bytes: bytes.length };
    } catch (error) {
      throw isFsError(error) ? error : fromIoError(op, requested, error);
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /**
   * Opens (creating) the file `base/tail…` for writing. Each step happens inside a folder
   * this process holds open and has verified, through /proc/self/fd/N/<name>: a folder
   * swapped for a symlink after the check fails the step (O_NOFOLLOW, ELOOP) instead of
   * leading the mkdir or the create outside the roots.
   */
  async function openForWrite(op, requested, real, base, tail) {
    const writeFlags = FS.O_WRONLY | FS.O_CREAT | FS.O_NOFOLLOW | FS.O_NONBLOCK;
    const dirFlags = FS.O_RDONLY | FS.O_DIRECTORY | FS.O_NOFOLLOW;
    let dir = await openVerified(op, requested, base, dirFlags, protectedPaths, true);
    if (!dir.verified) {
      // No /proc: the checks by path above stand alone.
      await dir.handle.close().catch(() => {});
      await fsp.mkdir(path.dirname(real), { recursive: true }).catch((error) => {
        throw fromIoError(op, requested, error);
      });
      return (await openVerified(op, requested, real, writeFlags, protectedPaths, true)).handle;
    }
    try {
      for (const name of tail.slice(0, -1)) {
        const at = `/proc/self/fd/${dir.handle.fd}/${name}`;
        await fsp.mkdir(at).catch((error) => {
          if (errorCode(error) !== 'EEXIST') throw fromIoError(op, requested, error);
        });
        const next = await openVerified(op, requested, at, dirFlags, protectedPaths, true);
        await dir.handle.close().catch(() => {});
        dir = next;
      }
      const at = `/proc/self/fd/${dir.handle.fd}/${tail[tail.length - 1]}`;
      let handle;
      try {
        handle = await fsp.open(at, writeFlags, 0o644);
      } catch (error) {
        throw openError(op, requested, error);
      }
      await verifyOpened(op, requested, handle, protectedPaths, true);
      return handle;
    } finally {
      await dir.handle.close().catch(() => {});
    }
  }

  /**
   * For a write: the real path of the target, the real path of its nearest existing
   * folder (`base`) and the names below it (`tail`, the file's own name last).
   */
  async function resolveForWrite(op, requested, absolute) {
    let probe = absolute;
    const tail = [];
    for (;;) {
      try {
        const real = await fsp.realpath(probe);
        if (tail.length === 0) return { real, base: path.dirname(real), tail: [path.basename(real)] };
        return { real: path.join(real, ...tail), base: real, tail };
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw fromIoError(op, requested, error);
        // A dangling symlink is not "missing": writing through it would create its target.
        const isLink = await fsp
          .lstat(probe)
          .then((info) => info.isSymbolicLink())
          .catch(() => false);
        // A folder on the way that links outside (whose target the isolate process's
        // namespace does not even hold) is refused as leading outside.
        if (isLink) throw deny(op, requested, probe !== absolute && (await linkLeavesRoots(probe)) ? 'symlink_outside' : 'dangling_symlink');
        const parent = path.dirname(probe);
        if (parent === probe) throw fromIoError(op, requested, error);
        tail.unshift(path.basename(probe));
        probe = parent;
      }
    }
  }

  async function list(requested) {
    const op = 'list';
    const { real } = await resolveExisting(op, requested);
    const { handle, verified } = await openVerified(op, requested, real, FS.O_RDONLY | FS.O_DIRECTORY | FS.O_NOFOLLOW, hiddenPaths);
    // The opened folder itself, never the path again (it may have been swapped since).
    const at = verified ? `/proc/self/fd/${handle.fd}` : real;
    try {
      let dir;
      try {
        dir = await fsp.opendir(at);
      } catch (error) {
        throw fromIoError(op, requested, error);
      }
      const names = [];
      try {
        for await (const entry of dir) {
          if (names.length >= maxListEntries) throw tooLarge(op, requested, maxListEntries, 'maxEntries');
          names.push(entry.name);
        }
      } catch (error) {
        throw isFsError(error) ? error : fromIoError(op, requested, error);
      }
      names.sort();
      const entries = [];
      for (const name of names) {
        // lstat: a listing describes links, it never follows them.
        const info = await fsp.lstat(path.join(at, name)).catch(() => undefined);
        if (info === undefined) continue; // removed while listing
        entries.push({ name, type: typeOf(info), size: info.isFile() ? info.size : 0 });
      }
      return entries;
    } finally {
      await handle.close().catch(() => {});
    }
  }

  async function stat(requested) {
    const op = 'stat';
    const { real } = await resolveExisting(op, requested);
    let opened;
    try {
      opened = await openVerified(op, requested, real, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK, hiddenPaths);
    } catch (error) {
      if (isFsError(error) && error.code !== 'permission_denied' && error.code !== 'io_error') throw error;
      // Not openable for reading (no read permission, a socket): describe it without following links.
      try {
        const info = await fsp.lstat(real);
        return { type: typeOf(info), size: info.isFile() ? info.size : 0, mtimeMs: info.mtimeMs };
      } catch (lstatError) {
        throw fromIoError(op, requested, lstatError);
      }
    }
    try {
      const info = await opened.handle.stat();
      return { type: typeOf(info), size: info.isFile() ? info.size : 0, mtimeMs: info.mtimeMs };
    } catch (error) {
      throw fromIoError(op, requested, error);
    } finally {
      await opened.handle.close().catch(() => {});
    }
  }

  return { readText, writeText, list, stat };
}

/** The most specific root holding `absolute` (nested roots: the deepest one decides the access). */
export function findRoot(roots, absolute) {
  let best;
  for (const root of roots) {
    const relative = path.relative(root.path, absolute);
    const inside = relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
    if (inside && (best === undefined || root.path.length > best.path.length)) best = root;
  }
  return best;
}

const REASON_TEXT = {
  invalid_path: 'the path is not a valid string',
  no_roots: 'this tool has no workspace roots',
  outside_roots: 'the absolute path is outside the workspace roots',
  parent_escape: 'the path leaves the workspace root',
  symlink_outside: 'a symbolic link resolves outside the workspace roots',
  read_only_root: 'the workspace root is read-only for this tool',
  dangling_symlink: 'writing through a dangling symbolic link is not allowed',
  symlink_swapped: 'the path became a symbolic link while it was being opened',
  protected_path: "the path holds the host's own configuration or state",
};

/**
 * @param {import('node:fs').Stats} info
 * @returns {import('./scoped-fs.d.mts').FsEntryType}
 */
function typeOf(info) {
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'directory';
  if (info.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** @returns {Error & { code: string, isScopedFsError: true }} */
function fsError(code, message) {
  const error = /** @type {Error & { code: string, isScopedFsError: true }} */ (new Error(message));
  error.code = code;
  error.isScopedFsError = true;
  return error;
}

/** @returns {error is Error & { code: string, isScopedFsError: true }} */
function isFsError(/** @type {unknown} */ error) {
  return typeof error === 'object' && error !== null && /** @type {{ isScopedFsError?: unknown }} */ (error).isScopedFsError === true;
}

function tooLarge(op, requested, limit, unit = 'maxBytes') {
  const error = fsError('too_large', `${op}: ${JSON.stringify(requested)} exceeds the limit of ${limit}`);
  error[unit] = limit;
  return error;
}

function errorCode(error) {
  return typeof error === 'object' && error !== null && typeof error.code === 'string' ? error.code : undefined;
}

// Node's messages carry the absolute host path; the tool sees only what it asked for.
function fromIoError(op, requested, error) {
  if (isFsError(error)) return error;
  const shown = JSON.stringify(String(requested).slice(0, MAX_TARGET_CHARS));
  switch (errorCode(error)) {
    case 'ENOENT':
      return fsError('not_found', `${op}: no such file or directory: ${shown}`);
    case 'ENOTDIR':
      return fsError('not_a_directory', `${op}: not a directory: ${shown}`);
    case 'EISDIR':
      return fsError('not_a_file', `${op}: is a directory: ${shown}`);
    case 'ELOOP':
      return fsError('symlink_loop', `${op}: too many levels of symbolic links: ${shown}`);
    case 'EACCES':
    case 'EPERM':
      return fsError('permission_denied', `${op}: permission denied: ${shown}`);
    default:
      return fsError('io_error', `${op}: input/output error on ${shown}`);
  }
}
