// Reload for `toolhost serve` (SPEC section 6: notifications/tools/list_changed
// when a manifest or policy change is reloaded), asked for by a file watcher
// (serve-watch.ts) or SIGHUP. Manifests and policies often live inside the
// workspace; tools cannot change them (src/config/protected-paths.ts). A
// configuration that no longer loads is reported and ignored: the previous one
// stays in force.
import type { Logger } from '../log.js';

/** What the reloader needs of a host: its supervisor and a way to close it. */
interface ReloadableHost<S> {
  readonly supervisor: S;
  close(): Promise<void>;
}

interface HostReloaderOptions<H extends ReloadableHost<S>, S> {
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
