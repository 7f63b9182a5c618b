// Live reload for `toolhost serve` (issue 8.3, SPEC section 6): the manifest
// folders (with their subfolders: folder-tree-watch.ts), the --policy files and
// the workspace's policies/ folder are watched, and a burst of changes triggers
// one reload, the same one SIGHUP asks for. Tools cannot use this to grant
// themselves anything: those paths are protected from them
// (src/config/protected-paths.ts). A watcher that fails is logged and re-armed
// on the next change of its parent folder; it never takes the host down.
import { watch, type FSWatcher, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { canonicalPathOf } from '../config/protected-paths.js';
import { FolderTreeWatch } from './folder-tree-watch.js';
import type { Logger } from '../log.js';

interface ConfigWatchOptions {
  /** Absolute manifest folders: watched recursively. */
  readonly manifestDirs: readonly string[];
  /** Absolute organisation policy files. */
  readonly policyFiles: readonly string[];
  /** Absolute workspace: its policies/ folder is watched. */
  readonly workspace: string;
  /** Changes under these are ignored: the host writes them itself (state folder, log file). */
  readonly ignore: readonly string[];
  /** Quiet time after the last change before onChange runs; default DEFAULT_WATCH_DEBOUNCE_MS. */
  readonly debounceMs?: number;
  readonly onChange: () => void;
  readonly logger: Logger;
}

export interface ConfigWatch {
  /** Stops every watcher and any pending reload; idempotent. */
  close(): void;
}

/** Editors save in several steps (write, rename, chmod): wait this long for the burst to end. */
const DEFAULT_WATCH_DEBOUNCE_MS = 200;

/** Starts watching; changes call `onChange` once per quiet period. */
export function watchConfig(options: ConfigWatchOptions): ConfigWatch {
  const debounceMs = options.debounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS;
  const ignore = options.ignore.map(canonicalPathOf);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const schedule = (): void => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) options.onChange();
    }, debounceMs);
  };
  const context: WatchContext = { schedule, ignore, logger: options.logger };
  const targets = [
    ...options.manifestDirs.map((path) => ({ path, recursive: true })),
    ...options.policyFiles.map((path) => ({ path, recursive: false })),
    { path: join(options.workspace, 'policies'), recursive: false },
  ];
  const watches = [...new Map(targets.map((target) => [canonicalPathOf(target.path), target.recursive])).entries()].map(
    ([path, recursive]) => new PathWatch(path, recursive, context),
  );
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watched of watches) watched.close();
    },
  };
}

interface WatchContext {
  readonly schedule: () => void;
  readonly ignore: readonly string[];
  readonly logger: Logger;
}

/**
 * One watched path: its parent folder (so creating, deleting or replacing the path is
 * seen, and a file saved by rename too) and, while it is a folder, the folder itself.
 */
class PathWatch {
  private parent: FSWatcher | undefined;
  private inner: { close(): void } | undefined;
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly recursive: boolean,
    private readonly context: WatchContext,
  ) {
    const name = basename(path);
    this.parent = this.open(dirname(path), (filename) => {
      if (filename !== null && filename !== name) {
        const beside = join(dirname(path), filename);
        // Not even a debug line for the host's own writes: with the log file beside a watched
        // policy, that line would be a write to it, seen here again, for ever.
        if (!isInsideAny(beside, context.ignore)) context.logger.debug({ path: beside }, 'configuration watch: a change beside a watched path, ignored');
        return;
      }
      // The path itself was created, removed or replaced: watch whatever is there now.
      this.armInner();
      context.schedule();
    });
    this.armInner();
  }

  close(): void {
    this.closed = true;
    this.parent?.close();
    this.inner?.close();
  }

  private armInner(): void {
    this.inner?.close();
    this.inner = undefined;
    if (this.closed || !isDirectory(this.path)) return;
    if (this.recursive) {
      this.inner = this.openTree();
      return;
    }
    this.inner = this.open(this.path, (filename) => this.onInnerChange(filename === null ? undefined : join(this.path, filename)));
  }

  private onInnerChange(path: string | undefined): void {
    if (path !== undefined && isInsideAny(path, this.context.ignore)) {
      this.context.logger.debug({ path }, 'configuration watch: a change the host made itself, ignored');
      return;
    }
    this.context.schedule();
  }

  /** The folder and its subfolders, each watched (not each file); undefined when it cannot be watched. */
  private openTree(): FolderTreeWatch | undefined {
    try {
      const tree = new FolderTreeWatch(this.path, {
        onChange: (path) => this.onInnerChange(path === this.path ? undefined : path),
        onRootError: (error) => {
          // Typically the folder was removed: the parent's watcher re-arms it when it comes back.
          this.context.logger.warn({ path: this.path, err: describe(error) }, 'a configuration watcher failed');
          tree.close();
          if (tree === this.inner) this.inner = undefined;
          this.context.schedule();
        },
      });
      return tree;
    } catch (error) {
      this.context.logger.warn({ path: this.path, err: describe(error) }, 'cannot watch a configuration path; SIGHUP still reloads');
      return undefined;
    }
  }

  /** fs.watch, with its failures logged instead of thrown; undefined when it cannot watch. */
  private open(dir: string, onEvent: (filename: string | null) => void): FSWatcher | undefined {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false, encoding: 'utf8' }, (_event, filename) => onEvent(filename));
    } catch (error) {
      this.context.logger.warn({ path: dir, err: describe(error) }, 'cannot watch a configuration path; SIGHUP still reloads');
      return undefined;
    }
    watcher.on('error', (error) => {
      // Typically the folder was removed: the parent's watcher re-arms it when it comes back.
      this.context.logger.warn({ path: dir, err: describe(error) }, 'a configuration watcher failed');
      watcher.close();
      if (watcher === this.inner) this.inner = undefined;
      this.context.schedule();
    });
    return watcher;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isInsideAny(path: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => path === dir || path.startsWith(`${dir}/`));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
