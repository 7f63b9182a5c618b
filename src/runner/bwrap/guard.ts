// The host's own configuration and state inside the namespace sandbox (SPEC
// sections 3 and 4): a manifest folder, policies/ or a --policy file that lies
// inside a read_write root is bound again read-only, and the state folder
// (journal, artifacts) is hidden under an empty read-only tmpfs. Without this,
// a process tool with a writable workspace could add a tool to its own session.
// Only paths that exist are masked: a mount point for a missing one would be
// created through the writable bind, in the host's tree (an empty policies/
// that the host's watcher sees and reloads). A missing protected path a tool
// creates is refused after the call instead (src/supervisor/protected-created.ts).
import { lstatSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RunSpec } from '../types.js';
import { isPathInside } from './command.js';

/** Bind mounts of the sandbox by host path (they appear at the same path inside). */
export type SandboxBinds = Map<string, 'ro' | 'rw'>;

/**
 * Adjusts `binds` so no protected path is writable, and returns the bwrap flags to put
 * after every bind: a read-only tmpfs over each existing hidden path the sandbox would
 * show. Nothing is mounted at a path that does not exist (that would create it on the host).
 */
export function guardHostFiles(spec: Pick<RunSpec, 'protectedPaths' | 'hiddenPaths'>, binds: SandboxBinds): string[] {
  const hidden = new Set(spec.hiddenPaths ?? []);
  const after: string[] = [];
  const masks = new Set<string>();
  for (const path of spec.protectedPaths ?? []) {
    // A writable bind inside a protected folder (a root declared there) becomes read-only.
    for (const [dir, access] of binds) if (access === 'rw' && isPathInside(dir, path)) binds.set(dir, 'ro');
    const enclosing = nearestBind(binds, path);
    if (enclosing === undefined) continue; // not visible in the sandbox at all
    if (lstatKind(path) === undefined) continue; // nothing to mask, and a mount point would create it
    if (hidden.has(path)) masks.add(path);
    else if (enclosing[1] === 'rw') binds.set(path, 'ro');
    else continue;
    pinAncestors(binds, path, enclosing);
  }
  for (const path of [...masks].sort()) after.push('--tmpfs', path, '--remount-ro', path);
  return after;
}

// A mount point cannot be renamed (EBUSY), but a plain folder above one can, taking
// the mount with it and leaving the host path free to be recreated: bind each
// existing folder between the root and the protected path onto itself.
function pinAncestors(binds: SandboxBinds, path: string, enclosing: readonly [string, 'ro' | 'rw']): void {
  const [root, access] = enclosing;
  if (access !== 'rw') return;
  for (let dir = dirname(path); dir !== root && isPathInside(dir, root) && dir !== dirname(dir); dir = dirname(dir)) {
    if (lstatKind(dir) === 'dir' && !binds.has(dir)) binds.set(dir, 'rw');
  }
}

/** The deepest bind holding `path`, with its access. */
function nearestBind(binds: SandboxBinds, path: string): readonly [string, 'ro' | 'rw'] | undefined {
  let best: [string, 'ro' | 'rw'] | undefined;
  for (const [dir, access] of binds) {
    if (isPathInside(path, dir) && (best === undefined || dir.length > best[0].length)) best = [dir, access];
  }
  return best;
}

function lstatKind(path: string): 'dir' | 'other' | undefined {
  try {
    return lstatSync(path).isDirectory() ? 'dir' : 'other';
  } catch {
    return undefined;
  }
}
