// ctx.fs for isolate and worker tools: every path is checked against the
// declared workspace roots before anything is opened, and again (through
// /proc/self/fd) after it is opened, so a symlink swapped in between is caught.
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

  /** Confirms which file an open descriptor really is (closes the check-then-open race). */
  async function verifyOpened(op, requested, handle, guarded) {
    let opened;
    try {
      opened = await fsp.readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      return; // No /proc (not Linux): the realpath check before open stands alone.
    }
    const reason = findRoot(roots, opened) === undefined ? 'symlink_outside' : findRoot(guarded, opened) !== undefined ? 'protected_path' : undefined;
    if (reason !== undefined) {
      await handle.close();
      throw deny(op, requested, reason);
    }
  }

  // O_NOFOLLOW fails with ELOOP when the checked real path was swapped for a link.
  function openError(op, requested, error) {
    return errorCode(error) === 'ELOOP' ? deny(op, requested, 'symlink_swapped') : fromIoError(op, requested, error);
  }

  async function realpathOrThrow(op, requested, absolute) {
    try {
      return await fsp.realpath(absolute);
    } catch (error) {
      throw fromIoError(op, requested, error);
    }
  }

  async function readText(requested) {
    const op = 'readText';
    const { real } = await resolveExisting(op, requested);
    let handle;
    try {
      handle = await fsp.open(real, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);
    } catch (error) {
      throw openError(op, requested, error);
    }
    await verifyOpened(op, requested, handle, hiddenPaths);
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
    const { real, existing } = await resolveForWrite(op, requested, absolute);
    const root = findRoot(roots, real);
    if (root === undefined) throw deny(op, requested, 'symlink_outside');
    checkGuarded(op, requested, real, protectedPaths);
    if (root.access !== 'read_write') throw deny(op, requested, 'read_only_root');
    if (!existing) {
      // Only the missing tail of the path is created, below a parent already proven inside the root.
      await fsp.mkdir(path.dirname(real), { recursive: true }).catch((error) => {
        throw fromIoError(op, requested, error);
      });
    }
    let handle;
    try {
      handle = await fsp.open(real, FS.O_WRONLY | FS.O_CREAT | FS.O_NOFOLLOW | FS.O_NONBLOCK, 0o644);
    } catch (error) {
      throw openError(op, requested, error);
    }
    await verifyOpened(op, requested, handle, protectedPaths);
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

  /** For a write: the real path of the target, or of its nearest existing parent plus the missing tail. */
  async function resolveForWrite(op, requested, absolute) {
    let probe = absolute;
    const tail = [];
    for (;;) {
      try {
        const real = await fsp.realpath(probe);
        return { real: path.join(real, ...tail), existing: tail.length === 0 };
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw fromIoError(op, requested, error);
        // A dangling symlink is not "missing": writing through it would create its target.
        const isLink = await fsp
          .lstat(probe)
          .then((info) => info.isSymbolicLink())
          .catch(() => false);
        if (isLink) throw deny(op, requested, 'dangling_symlink');
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
    let dir;
    try {
      dir = await fsp.opendir(real);
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
      const info = await fsp.lstat(path.join(real, name)).catch(() => undefined);
      if (info === undefined) continue; // removed while listing
      entries.push({ name, type: typeOf(info), size: info.isFile() ? info.size : 0 });
    }
    return entries;
  }

  async function stat(requested) {
    const op = 'stat';
    const { real } = await resolveExisting(op, requested);
    try {
      const info = await fsp.stat(real);
      return { type: typeOf(info), size: info.isFile() ? info.size : 0, mtimeMs: info.mtimeMs };
    } catch (error) {
      throw fromIoError(op, requested, error);
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

function typeOf(info) {
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'directory';
  if (info.isSymbolicLink()) return 'symlink';
  return 'other';
}

function fsError(code, message) {
  const error = new Error(message);
  error.code = code;
  error.isScopedFsError = true;
  return error;
}

function isFsError(error) {
  return typeof error === 'object' && error !== null && error.isScopedFsError === true;
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
