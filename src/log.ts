// pino logger factory. Logs go to fd 2 or a log file, never stdout: in `serve`,
// stdout carries protocol messages only.
import { pino, type Logger } from 'pino';

export type { Logger };

export interface LogOptions {
  /** Append JSON lines here instead of stderr. */
  readonly file?: string;
  readonly level?: string;
  /**
   * false: lines are handed to the OS off the event loop (coalesced while a write is
   * pending), for `serve`, where a synchronous write per line was the largest cost left
   * of a call. pino writes what is pending synchronously on process exit (an exit
   * handler), and flushLogs() waits for it on a graceful stop; only a SIGKILL can lose
   * the lines of the last write. Default true: every line is written before the call returns.
   */
  readonly sync?: boolean;
}

export function createLogger(options: LogOptions = {}): Logger {
  const destination = pino.destination({ dest: options.file ?? 2, sync: options.sync ?? true, mkdir: true });
  return pino(
    {
      level: options.level ?? process.env['TOOLHOST_LOG_LEVEL'] ?? 'info',
      base: { name: 'toolhost' },
      redact: { paths: ['env', '*.env', 'secret', '*.secret'], censor: '[redacted]' },
    },
    destination,
  );
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
