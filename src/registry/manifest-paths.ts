// Path rules of a manifest: entry and command paths stay inside the manifest
// folder (checked lexically and again after symlinks are resolved), and
// workspace roots become absolute, symlink-resolved paths.
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';

type PathResult = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly reason: string };

/** Resolves `declared` (relative to the manifest folder `dir`, already real) to a real path inside `dir`. */
function resolveInsideFolder(dir: string, declared: string, what: string): PathResult {
  if (isAbsolute(declared)) return { ok: false, reason: `${what} ${JSON.stringify(declared)} is an absolute path; it must be relative to the manifest folder` };
  const lexical = resolve(dir, declared);
  if (!isInside(dir, lexical)) return { ok: false, reason: `${what} ${JSON.stringify(declared)} resolves outside the manifest folder` };
  let real: string;
  try {
    real = realpathSync.native(lexical);
  } catch {
    return { ok: false, reason: `${what} ${JSON.stringify(declared)} does not exist` };
  }
  if (!isInside(dir, real)) return { ok: false, reason: `${what} ${JSON.stringify(declared)} resolves outside the manifest folder through a symlink` };
  return { ok: true, path: real };
}

/** Like resolveInsideFolder, and the target must be a regular file (an ES module to load). */
export function resolveEntry(dir: string, declared: string): PathResult {
  const result = resolveInsideFolder(dir, declared, 'entry');
  if (result.ok && !statSync(result.path).isFile()) return { ok: false, reason: `entry ${JSON.stringify(declared)} is not a file` };
  return result;
}

/**
 * Resolves one argv element. ./ and ../ elements are manifest-folder paths; a bare first
 * element is a program found on PATH at run time; a first element with any other slash
 * would depend on the working directory (or point anywhere), so it is refused.
 */
export function resolveCommandElement(dir: string, element: string, index: number): PathResult {
  const what = `command[${index}]`;
  if (element.startsWith('./') || element.startsWith('../')) return resolveInsideFolder(dir, element, what);
  if (index === 0 && element.includes('/')) {
    return { ok: false, reason: `${what} ${JSON.stringify(element)} must be a program name found on PATH or a ./ path inside the manifest folder` };
  }
  return { ok: true, path: element };
}

export const WORKSPACE_VARIABLE = '${WORKSPACE}';

/** Substitutes ${WORKSPACE}, requires an absolute path, and resolves symlinks when the path exists. */
export function resolveRoot(declared: string, workspace: string): PathResult {
  const substituted = declared.split(WORKSPACE_VARIABLE).join(workspace);
  const unknown = /\$\{[^}]*\}/.exec(substituted);
  if (unknown) return { ok: false, reason: `root path ${JSON.stringify(declared)} uses unknown variable ${unknown[0]}; only ${WORKSPACE_VARIABLE} is defined` };
  if (!isAbsolute(substituted)) return { ok: false, reason: `root path ${JSON.stringify(declared)} must be absolute (or start with ${WORKSPACE_VARIABLE})` };
  const normalized = resolve(substituted);
  try {
    return { ok: true, path: realpathSync(normalized) };
  } catch {
    // A root that does not exist yet (a tool may create it) keeps its normalized path.
    return { ok: true, path: normalized };
  }
}

/** True when `path` is `dir` itself or below it. */
export function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
