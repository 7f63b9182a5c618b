// pino logger factory. Logs go to fd 2 or a log file, never stdout: in `serve`,
// stdout carries protocol messages only.
import { writeSync } from 'node:fs';
import { pino, type Logger } from 'pino';

export type { Logger };

export interface LogOptions {
  /** Append JSON lines here instead of stderr. */
  readonly file?: string;
  readonly level?: string;
  /**
   * false: lines are handed to the OS off the event loop, for `serve`, where a synchronous
   * write per line was the largest cost left of a call; the lines of LOG_COALESCE_MS go
   * out in one write (one trip through libuv's thread pool, whose wake-up a call paid for
   * its own line, instead of one per line). What is pending is written synchronously on
   * process exit (an exit handler), and flushLogs() hands it over on a graceful stop; only
   * a SIGKILL can lose the lines of the last few milliseconds. Default true: every line is
   * written before the call returns.
   */
  readonly sync?: boolean;
}

/** How long `sync: false` lines wait to be written together (ms). */
export const LOG_COALESCE_MS = 5;

export function createLogger(options: LogOptions = {}): Logger {
  const sync = options.sync ?? true;
  const destination = pino.destination({ dest: options.file ?? 2, sync, mkdir: true });
  return pino(
    {
      level: options.level ?? process.env['TOOLHOST_LOG_LEVEL'] ?? 'info',
      base: { name: 'toolhost' },
      redact: { paths: ['env', '*.env', 'secret', '*.secret'], censor: '[redacted]' },
    },
    sync ? destination : coalescing(destination),
  );
}

type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * A destination that gathers the lines of LOG_COALESCE_MS and hands them to `destination`
 * (asynchronous) in one write; flush() and process exit write what is gathered first.
 * Exported for its test.
 */
export function coalescing(destination: SonicBoom): { write(line: string): void; flush(callback: (error?: Error) => void): void; flushSync(): void } {
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const handOver = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    destination.write(chunk);
  };
  // What is gathered, written now, after what the destination holds (flushSync). On exit, pino's
  // own handler (registered first, with the destination) has written that already.
  const flushSync = (): void => {
    try {
      destination.flushSync();
      if (pending !== '') writeSync((destination as unknown as { fd: number }).fd, pending);
    } catch {
      // Nothing more can be written (a closed stderr): as a failed write always was.
    }
    pending = '';
    clearTimeout(timer);
    timer = undefined;
  };
  process.once('exit', flushSync);
  return {
    write(line) {
      pending += line;
      if (timer !== undefined) return;
      timer = setTimeout(handOver, LOG_COALESCE_MS);
      // Never keeps a finished process alive: the exit handler writes what is left.
      timer.unref();
    },
    flush(callback) {
      handOver();
      destination.flush(callback);
    },
    flushSync,
  };
}

/** Resolves once every line logged so far has been written (a graceful stop waits for it). */
export function flushLogs(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve());
    } catch {
      // A destroyed or broken stream has nothing left to write.
      resolve();
    }
  });
}

/** A logger that drops everything, for tests and library use. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
