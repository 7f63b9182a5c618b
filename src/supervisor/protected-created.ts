// Protected paths a tool created (SPEC sections 3 and 4). The namespace sandbox
// masks the host's own files only where they exist: a mount point for a missing
// one (an absent workspace policies/) would itself be created through the
// writable bind, in the host's tree. So a protected path missing when a call
// starts is looked at again when it ends: if the tool made it, it is removed
// and the call fails with policy_denied. ctx.fs refuses such writes up front;
// this is the line that holds for process tools.
import { lstatSync, rmSync } from 'node:fs';
import { HostError } from '../errors.js';
import type { RunSpec } from '../runner/types.js';

/** The protected paths inside a writable root of `spec` that do not exist now. */
export function missingProtectedPaths(spec: RunSpec | undefined): string[] {
  if (spec === undefined) return [];
  return writableProtectedPaths(spec).filter((path) => !exists(path));
}

// Which protected paths a tool could create follows from its spec alone (built at load):
// worked out on its first call, not on every one. Whether they exist is looked at per call.
const writableProtected = new WeakMap<RunSpec, readonly string[]>();

function writableProtectedPaths(spec: RunSpec): readonly string[] {
  let paths = writableProtected.get(spec);
  if (paths === undefined) {
    const writable = spec.roots.filter((root) => root.access === 'read_write').map((root) => root.path);
    paths = Object.freeze(spec.protectedPaths.filter((path) => writable.some((root) => path === root || path.startsWith(`${root}/`))));
    writableProtected.set(spec, paths);
  }
  return paths;
}

/** Removes what a call created among `missing`, and throws policy_denied naming it. */
export function refuseCreatedProtectedPaths(missing: readonly string[], tool: string): void {
  const created = missing.filter(exists);
  if (created.length === 0) return;
  // rm on the path itself: a symlink planted there is removed, never followed.
  for (const path of created) rmSync(path, { recursive: true, force: true });
  throw new HostError('policy_denied', `The tool ${tool} created one of the host's protected paths (its policies or configuration); it was removed.`, {
    reason: 'protected_path_created',
    paths: created,
  });
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
