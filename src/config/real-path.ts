// Symlink-resolved paths, as the host compares them (trust globs, protected paths,
// duplicate manifests). The native realpath(3) is one call into libc; Node's
// JavaScript realpathSync lstat()s each component from JavaScript, about twice
// the cost, and a host start resolves several paths per manifest.
import { realpathSync } from 'node:fs';

/** `path` with every symlink resolved; `fallback` (default `path` itself) when it cannot be resolved. */
export function realPathOr(path: string, fallback: string = path): string {
  try {
    return realpathSync.native(path);
  } catch {
    return fallback;
  }
}
