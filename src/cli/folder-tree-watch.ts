// A folder and its subfolders watched with one fs.watch per folder. Node 20's
// `recursive: true` on Linux opens an inotify watch and stats each FILE of the
// tree, synchronously (a thousand manifests: about 80 ms of CPU, far more on a
// loaded machine, before `serve` answers its first tools/list); a watch on a
// folder already reports its entries created, changed, renamed and removed.
// Subfolders created later are watched when their creation is seen; symbolic
// links are not followed (as Node's recursive watch does not).
import { lstatSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

interface FolderTreeWatchOptions {
  /** Called with the changed path (absolute), or the folder when the system did not say which entry. */
  readonly onChange: (path: string) => void;
  /** A subfolder's watch failed (it was removed, typically); the root's own failure goes to `onRootError`. */
  readonly onRootError: (error: Error) => void;
}

export class FolderTreeWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private closed = false;

  /** Watches `root` and every folder under it; throws when `root` itself cannot be watched. */
  constructor(
    private readonly root: string,
    private readonly options: FolderTreeWatchOptions,
  ) {
    this.watchFolder(root);
  }

  close(): void {
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private watchFolder(folder: string): void {
    if (this.closed || this.watchers.has(folder)) return;
    const watcher = watch(folder, { persistent: false, encoding: 'utf8' }, (_event, name) => this.onEvent(folder, name));
    this.watchers.set(folder, watcher);
    watcher.on('error', (error) => {
      this.forget(folder);
      if (folder === this.root) this.options.onRootError(error);
      else this.options.onChange(folder);
    });
    for (const sub of subfolders(folder)) {
      try {
        this.watchFolder(sub);
      } catch {
        // Gone or unreadable meanwhile: a later event in its parent watches it again.
      }
    }
  }

  private onEvent(folder: string, name: string | null): void {
    if (name === null) {
      this.options.onChange(folder);
      return;
    }
    const path = join(folder, name);
    // A folder created (or moved in) gets its own watch; one removed loses its watches.
    if (isFolder(path)) {
      try {
        this.watchFolder(path);
      } catch {
        // Gone again already: the change below reloads anyway.
      }
    } else if (this.watchers.has(path)) this.forget(path);
    this.options.onChange(path);
  }

  /** Stops watching `folder` and everything under it. */
  private forget(folder: string): void {
    for (const [path, watcher] of this.watchers) {
      if (path === folder || path.startsWith(`${folder}/`)) {
        watcher.close();
        this.watchers.delete(path);
      }
    }
  }
}

function subfolders(folder: string): string[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(folder, entry.name));
  } catch {
    return [];
  }
}

function isFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
