// pino logger factory. Logs go to fd 2 or a log file, never stdout: in `serve`,
// stdout carries protocol messages only.
import { writeSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import { allowFlatLines } from './log-flat-line.js';

export type { Logger };

interface LogOptions {
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
  return redactingLogger(options.level ?? process.env['TOOLHOST_LOG_LEVEL'] ?? 'info', sync ? destination : coalescing(destination));
}

/** What log lines censor: these keys of the logged object, and the same keys one level inside it. */
const REDACT = { paths: ['env', '*.env', 'secret', '*.secret'], censor: '[redacted]' };
const CENSOR = REDACT.censor;
const ERROR_KEY = 'err';

/**
 * A pino logger that censors REDACT's paths with the lines pino's own `redact` option
 * wrote, more cheaply: that option runs its redactor on every top-level value of every
 * line and of every child's bindings (a selective clone, a path walk, a serialize each,
 * numbers and strings included), which was most of the cost of a call's log line and of
 * its per-call child. Here a value is looked at only when it is an object with an `env`
 * or `secret` key; everything else goes through pino untouched. Exported for its test.
 */
export function redactingLogger(level: string, destination: pino.DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: { name: 'toolhost' },
      formatters: { log: censorLogObject },
      // The error key keeps pino's serializer; the object it makes is censored like any other.
      serializers: { [ERROR_KEY]: (error: unknown) => censorNested(pino.stdSerializers.err(error as Error)) },
    },
    destination,
  );
  // Child bindings are written once per child; pino resets the bindings formatter for
  // children, so they are censored here, for every descendant (children inherit `child`).
  const child = logger.child as unknown as (this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => Logger;
  const setBindings = logger.setBindings as unknown as (this: Logger, bindings: pino.Bindings) => void;
  Object.assign(logger, {
    child(this: Logger, bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) {
      return child.call(this, censorLogObject(bindings), childOptions);
    },
    setBindings(this: Logger, bindings: pino.Bindings) {
      setBindings.call(this, censorLogObject(bindings));
    },
  });
  // An object interpolated into the message (`%j`, `%o`) keeps pino's own redactor: rare, and exact.
  const symbols = pino.symbols as unknown as { formatOptsSym: symbol };
  const withRedact = pino({ redact: REDACT }, { write: () => undefined });
  (logger as unknown as Record<symbol, unknown>)[symbols.formatOptsSym] = (withRedact as unknown as Record<symbol, unknown>)[symbols.formatOptsSym];
  // Its lines of flat facts may skip pino's generic path (log-flat-line.ts), as the options above allow.
  allowFlatLines(logger);
  return logger;
}

/**
 * The logged object with REDACT applied, or the object itself when nothing matches (the
 * common case: no copy). `env`/`secret` at the top are censored whatever their value (as
 * pino: undefined and functions are left out of the line anyway); an object value is
 * censored one level in (censorNested). The error key is left to its serializer.
 */
function censorLogObject<T extends object>(object: T): T {
  let censored: Record<string, unknown> | undefined;
  const source = object as Record<string, unknown>;
  for (const key in source) {
    if (!Object.prototype.hasOwnProperty.call(source, key)) continue;
    const value = source[key];
    let next = value;
    if (key === 'env' || key === 'secret') {
      if (value !== undefined && typeof value !== 'function') next = CENSOR;
    } else if (key !== ERROR_KEY) {
      next = censorNested(value);
    }
    if (next === value) continue;
    censored ??= { ...source };
    censored[key] = next;
  }
  return (censored ?? object) as T;
}

/**
 * `*.env` and `*.secret` for one top-level value, as pino's redactor did it: an object
 * (not an array: its copy holds only the items) that has the key, own or inherited, is
 * copied (same prototype, own enumerable properties) and the copy's key censored.
 */
function censorNested(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  if (!('env' in value) && !('secret' in value)) return value;
  const copy = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
  for (const key in value) if (Object.prototype.hasOwnProperty.call(value, key)) copy[key] = (value as Record<string, unknown>)[key];
  if ('env' in copy) copy['env'] = CENSOR;
  if ('secret' in copy) copy['secret'] = CENSOR;
  return copy;
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
