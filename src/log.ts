// pino logger factory. Logs go to fd 2 or a log file, never stdout: in `serve`,
// stdout carries protocol messages only.
import { pino, type Logger } from 'pino';

export type { Logger };

export interface LogOptions {
  /** Append JSON lines here instead of stderr. */
  readonly file?: string;
  readonly level?: string;
}

export function createLogger(options: LogOptions = {}): Logger {
  const destination = pino.destination({ dest: options.file ?? 2, sync: true, mkdir: true });
  return pino(
    {
      level: options.level ?? process.env['TOOLHOST_LOG_LEVEL'] ?? 'info',
      base: { name: 'toolhost' },
      redact: { paths: ['env', '*.env', 'secret', '*.secret'], censor: '[redacted]' },
    },
    destination,
  );
}

/** A logger that drops everything, for tests and library use. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
