// Reload for `toolhost serve` (SPEC section 6: notifications/tools/list_changed
// when a manifest or policy change is reloaded). Watches the manifest folders,
// the organisation policy files and the workspace's policies/ folder; after a
// change settles, builds a new host. A configuration that no longer loads is
// logged and ignored: the host keeps serving what it had (fail closed on the
// new files, lose nothing on the old).
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../log.js';

export interface WatchedConfig {
  readonly manifestDirs: readonly string[];
  readonly policyFiles: readonly string[];
  readonly workspace: string;
}

export interface ConfigWatcher {
  close(): void;
}

/** How long the files must be quiet before a reload: editors write in several steps. */
export const RELOAD_SETTLE_MS = 300;

/**
 * Calls `onChange` once per burst of changes to manifests or policies. The
 * watches are set up again after each burst, so a folder created meanwhile
 * (the workspace's policies/, a new manifest folder) is watched from then on.
 */
export function watchConfig(config: WatchedConfig, logger: Logger, onChange: () => void, settleMs = RELOAD_SETTLE_MS): ConfigWatcher {
  let watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const changed = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (closed) return;
      rearm();
      onChange();
    }, settleMs);
    timer.unref();
  };
  const add = (path: string, options: { recursive: boolean }, accept: (name: string | null) => boolean): void => {
    if (!existsSync(path)) return;
    try {
      const watcher = watch(path, { recursive: options.recursive, persistent: false }, (_event, name) => {
        if (accept(name === null ? null : String(name))) changed();
      });
      watcher.on('error', (error) => logger.warn({ path, err: error.message }, 'config watch stopped'));
      watchers.push(watcher);
    } catch (error) {
      logger.warn({ path, err: error instanceof Error ? error.message : String(error) }, 'cannot watch for config changes');
    }
  };
  const rearm = (): void => {
    for (const watcher of watchers) watcher.close();
    watchers = [];
    for (const dir of config.manifestDirs) add(dir, { recursive: true }, () => true);
    // Editors replace files by rename, which ends a watch on the file itself: watch its folder.
    for (const file of config.policyFiles) add(dirname(file), { recursive: false }, (name) => name === null || name === basename(file));
    const policies = join(config.workspace, 'policies');
    add(policies, { recursive: false }, (name) => name === null || /\.ya?ml$/.test(name));
    // Until the workspace has a policies/ folder, watch for it to appear.
    if (!existsSync(policies)) add(config.workspace, { recursive: false }, (name) => name === null || name === 'policies');
  };
  rearm();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** What the reloader needs of a host: its supervisor and a way to close it. */
export interface ReloadableHost<S> {
  readonly supervisor: S;
  close(): Promise<void>;
}

export interface HostReloaderOptions<H extends ReloadableHost<S>, S> {
  /** Builds a new host; undefined when the configuration does not load (already reported). */
  readonly build: () => Promise<H | undefined>;
  /** Puts the new supervisor in force (and tells the client its tools changed). */
  readonly swap: (next: S) => Promise<void>;
  /** Resolves once no call runs on the given supervisor. */
  readonly whenIdle: (supervisor: S) => Promise<void>;
  readonly logger: Logger;
}

/** Owns the host in force and the ones retiring after a reload; one reload at a time. */
export class HostReloader<H extends ReloadableHost<S>, S> {
  private host: H;
  private readonly retiring = new Set<Promise<void>>();
  private running: Promise<void> | undefined;
  private pending = false;
  private closed = false;

  constructor(
    initial: H,
    private readonly options: HostReloaderOptions<H, S>,
  ) {
    this.host = initial;
  }

  get current(): H {
    return this.host;
  }

  /** Reloads now, or once more after the reload in progress. */
  reload(): void {
    if (this.closed) return;
    if (this.running) {
      this.pending = true;
      return;
    }
    this.running = this.reloadLoop().finally(() => (this.running = undefined));
  }

  /** Stops reloading and closes every host: the one in force and any still retiring. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
    await Promise.allSettled([this.host.close(), ...this.retiring]);
  }

  private async reloadLoop(): Promise<void> {
    do {
      this.pending = false;
      let next: H | undefined;
      try {
        next = await this.options.build();
      } catch (error) {
        this.options.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'reload failed; still serving the previous configuration');
        continue;
      }
      if (!next) {
        this.options.logger.warn('the changed configuration does not load; still serving the previous one');
        continue;
      }
      if (this.closed) {
        await next.close();
        return;
      }
      const previous = this.host;
      this.host = next;
      await this.options.swap(next.supervisor);
      this.options.logger.info('configuration reloaded');
      // Calls already running finish on the previous host; then it closes.
      const retired: Promise<void> = this.options
        .whenIdle(previous.supervisor)
        .then(() => previous.close())
        .catch((error: unknown) => this.options.logger.warn({ err: String(error) }, 'closing the previous host failed'))
        .finally(() => this.retiring.delete(retired));
      this.retiring.add(retired);
    } while (this.pending && !this.closed);
  }
}
