// What the namespace sandbox must show for the tool's command to start: the
// command's real install prefix, read-only, even when it lives somewhere that
// is otherwise hidden (a pyenv Python under /root). Version-manager shims
// (pyenv, rbenv, nodenv: a script that execs `<manager> exec <program>`) are
// resolved on the host to the real binary, and the shim's path becomes a
// symlink to it inside the sandbox, so the PATH lookup there finds the same
// program the host would run. The version is chosen from the manifest folder
// (which tools can never write), never from the tool's working directory: a
// `.python-version` a tool wrote into the workspace must not change what the
// next sandbox mounts.
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { findExecutable } from './binaries.js';
import type { SandboxFacts } from './sandbox-facts.js';

interface CommandMounts {
  /** Host paths to bind read-only at the same path. */
  readonly readOnlyBinds: readonly string[];
  /** Symlinks to create in the sandbox: `path` → `target`. */
  readonly symlinks: readonly { readonly path: string; readonly target: string }[];
}

/**
 * The mounts that make `program` (argv[0] of the tool) runnable in a sandbox
 * whose only system directories are `visibleDirs`. `searchPath` must be the PATH
 * the sandbox gets, so the host resolves exactly what execvp will find inside.
 * `manifestDir` is where a version manager looks for a version file.
 */
export function resolveCommandMounts(facts: SandboxFacts, program: string, searchPath: string, cwd: string, visibleDirs: readonly string[], manifestDir: string): CommandMounts {
  const versionDir = versionLookupDir(manifestDir);
  // Resolving a shim runs its version manager: once per command and host, not per sandbox.
  const key = `command-mounts\0${program}\0${searchPath}\0${cwd}\0${visibleDirs.join(':')}\0${versionDir}`;
  return facts.remember(key, () => computeCommandMounts(program, searchPath, cwd, visibleDirs, versionDir));
}

/** True when `path` is `dir` or inside it. */
export function isPathInside(path: string, dir: string): boolean {
  return dir === '/' || path === dir || path.startsWith(`${dir}/`);
}

const NO_MOUNTS: CommandMounts = Object.freeze({ readOnlyBinds: Object.freeze([]), symlinks: Object.freeze([]) });

// Never bind these wholesale as an install prefix: they hold users' secrets.
const HIDDEN_TREES = ['/root', '/home', '/tmp', '/var/tmp', '/run', '/proc', '/sys', '/dev'];

/** Files by which pyenv, rbenv and nodenv choose a version for a folder. */
const VERSION_FILES = ['.python-version', '.ruby-version', '.node-version'];

/**
 * The folder a version manager resolves from: the manifest folder when it holds a
 * version file of its own (the closest file wins, so its parents are never read),
 * else `/`, so only the manager's global version applies. Never the workspace.
 */
function versionLookupDir(manifestDir: string): string {
  return VERSION_FILES.some((name) => existsSync(join(manifestDir, name))) ? manifestDir : '/';
}

function computeCommandMounts(program: string, searchPath: string, cwd: string, visibleDirs: readonly string[], versionDir: string): CommandMounts {
  const found = findExecutable(program.includes('/') ? resolve(cwd, program) : program, searchPath);
  // Not found: execvp fails inside too, and the tool fails with its own error.
  if (found === undefined) return NO_MOUNTS;
  const isVisible = (path: string) => visibleDirs.some((dir) => isPathInside(path, dir));
  let real = realpathSync(found);
  const manager = readShimManager(real);
  if (manager !== undefined) {
    try {
      real = realpathSync(resolveShim(manager, basename(found), versionDir));
    } catch {
      // No version selected or the manager failed: the shim fails inside too, as the tool's own error.
      return NO_MOUNTS;
    }
  }
  if (isVisible(real)) return NO_MOUNTS;
  const prefix = installPrefix(real);
  const bind = prefix ?? real;
  // A path already visible (a symlink in /usr/bin) needs only its target; a hidden one gets a symlink.
  const needsLink = !isVisible(found) && !isPathInside(found, bind);
  return { readOnlyBinds: [bind], symlinks: needsLink ? [{ path: found, target: real }] : [] };
}

// /x/bin/python3 → /x (its lib/ and share/ come along); a file not in a bin/ is bound alone.
function installPrefix(real: string): string | undefined {
  const dir = dirname(real);
  if (basename(dir) !== 'bin') return undefined;
  const prefix = dirname(dir);
  if (prefix === '/' || HIDDEN_TREES.some((tree) => isPathInside(tree, prefix))) return undefined;
  // Inside a home, a prefix like ~/.cargo or ~/.local also holds credentials and data:
  // only a version manager's install (~/.pyenv/versions/3.11.7) is bound whole.
  const inHiddenTree = HIDDEN_TREES.some((tree) => isPathInside(prefix, tree));
  if (inHiddenTree && basename(dirname(prefix)) !== 'versions') return undefined;
  return prefix;
}

interface ShimManager {
  readonly executable: string;
  readonly rootVariable?: { readonly name: string; readonly value: string };
}

// pyenv/rbenv/nodenv shims end with: exec "/root/.pyenv/libexec/pyenv" exec "$program" "$@"
function readShimManager(path: string): ShimManager | undefined {
  const head = readHead(path, 4096);
  if (!head.startsWith('#!')) return undefined;
  const exec = /exec\s+"([^"]+)"\s+exec\s+"\$program"/.exec(head);
  if (exec?.[1] === undefined) return undefined;
  const root = /export\s+([A-Z]+_ROOT)="([^"]+)"/.exec(head);
  return {
    executable: exec[1],
    ...(root?.[1] !== undefined && root[2] !== undefined ? { rootVariable: { name: root[1], value: root[2] } } : {}),
  };
}

function resolveShim(manager: ShimManager, program: string, versionDir: string): string {
  // `<manager> which <program>` from versionDir: the version files the host chose, not the tool.
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '' };
  if (manager.rootVariable !== undefined) env[manager.rootVariable.name] = manager.rootVariable.value;
  const out = execFileSync(manager.executable, ['which', program], { cwd: versionDir, env, encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
  const line = out.split('\n')[0]?.trim() ?? '';
  if (!line.startsWith('/')) throw new Error(`${basename(manager.executable)} which ${program} gave no path`);
  return line;
}

function readHead(path: string, maxBytes: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(maxBytes);
    const length = readSync(fd, buffer, 0, maxBytes, 0);
    return buffer.subarray(0, length).toString('latin1');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
