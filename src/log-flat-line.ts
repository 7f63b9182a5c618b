// The line of a call whose facts are all flat (strings, numbers, booleans, null),
// built directly, byte for byte what pino writes for it through the host's logger.
// pino's generic path (the log method, write(), the redaction formatter, asJson's
// loop with its serializer and stringifier lookups, a merged object per line) was
// ~7% of the host's main thread at 8 calls in flight, for lines that are nearly all
// `call completed`. Anything else (an object or error value, a censored key, a key
// pino would treat specially, a logger other than the host's own) is left to pino.
import { tracingChannel } from 'node:diagnostics_channel';
import { pino, type Logger } from 'pino';

const symbols = pino.symbols as unknown as Record<'lsCacheSym' | 'chindingsSym' | 'timeSym' | 'endSym' | 'streamSym' | 'needsMetadataGsym', symbol>;

/** pino's own asJson tracing channel: while anything listens, lines go through pino (which traces them). */
const asJsonChannel = tracingChannel('pino_asJson');

/**
 * The loggers this module may write for: made by redactingLogger, whose options are known
 * (no mixin, hooks, msgPrefix, nestedKey, custom levels or serializers but `err`; messageKey
 * `msg`; the log formatter censorLogObject). A child is not in it (its options may differ).
 */
const flatLoggers = new WeakSet<object>();

/** Lets writeFlatLine write for `logger` (see flatLoggers for what that assumes). */
export function allowFlatLines(logger: Logger): void {
  flatLoggers.add(logger);
}

/**
 * A string as pino (10, Node < 25) writes it: its `_asString`, copied because pino does not
 * export it. It differs from JSON.stringify for a lone surrogate in a string of ≤ 100
 * characters (written raw, not as \\udXXX), so JSON.stringify alone would not be identical.
 */
export function pinoString(str: string): string {
  const length = str.length;
  if (length > 100) return JSON.stringify(str);
  let result = '';
  let last = 0;
  let found = false;
  let point = 255;
  for (let i = 0; i < length && point >= 32; i++) {
    point = str.charCodeAt(i);
    if (point === 34 || point === 92) {
      result += str.slice(last, i) + '\\';
      last = i;
      found = true;
    }
  }
  if (point < 32) return JSON.stringify(str);
  return '"' + (found ? result + str.slice(last) : str) + '"';
}

/**
 * The facts as pino's asJson writes them after the bindings (`,"key":value`…), or undefined
 * when one of them needs pino: a value that is not a string, finite or infinite number,
 * boolean, null or undefined (an object goes through censorNested and safe-stable-stringify;
 * a function could make pino read the object as an HTTP response); `env`/`secret` (censored)
 * and `err` (its serializer); `socket` (with method and headers, an HTTP request to pino);
 * an integer-like key (the merged object pino sees would order it first); the names' keys.
 */
function flatFacts(facts: Readonly<Record<string, unknown>>): string | undefined {
  let out = '';
  for (const key in facts) {
    if (!Object.prototype.hasOwnProperty.call(facts, key)) continue;
    const value = facts[key];
    if (value === undefined) continue;
    const first = key.charCodeAt(0);
    if (first >= 48 && first <= 57) return undefined;
    switch (key) {
      case 'env':
      case 'secret':
      case 'err':
      case 'socket':
      case 'callId':
      case 'tool':
      case 'principal':
        return undefined;
    }
    let text: string;
    switch (typeof value) {
      case 'string':
        text = pinoString(value);
        break;
      case 'number':
        text = Number.isFinite(value) ? '' + value : 'null';
        break;
      case 'boolean':
        text = value ? 'true' : 'false';
        break;
      default:
        if (value !== null) return undefined;
        text = 'null';
    }
    out += ',' + pinoString(key) + ':' + text;
  }
  return out;
}

/**
 * Writes the line `logger[level]({ ...names, ...facts }, message)` would write and returns
 * true, or returns false (nothing written) when that line needs pino's own path. `names` is
 * the names' part of the line as namesJson made it. The level must be enabled (the caller checks).
 */
export function writeFlatLine(logger: Logger, level: pino.Level, names: string, facts: Readonly<Record<string, unknown>>, message: string): boolean {
  if (typeof message !== 'string' || !flatLoggers.has(logger) || asJsonChannel.hasSubscribers) return false;
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[symbols.streamSym] as { write(line: string): void } & Record<symbol, unknown>;
  if (stream[symbols.needsMetadataGsym] === true) return false;
  const props = flatFacts(facts);
  if (props === undefined) return false;
  const num = logger.levels.values[level] as number;
  const time = (internals[symbols.timeSym] as () => string)();
  const lsCache = internals[symbols.lsCacheSym] as Record<number, string>;
  stream.write(lsCache[num] + time + (internals[symbols.chindingsSym] as string) + names + props + ',"msg":' + pinoString(message) + (internals[symbols.endSym] as string));
  return true;
}

/**
 * The names' part of a line (`,"callId":…,"tool":…[,"principal":…]`), built once per call;
 * undefined when a name is not a string (pino's path then writes whatever it is).
 */
export function namesJson(callId: unknown, tool: unknown, principal: unknown): string | undefined {
  if (typeof callId !== 'string' || typeof tool !== 'string' || (principal !== null && typeof principal !== 'string')) return undefined;
  const named = ',"callId":' + pinoString(callId) + ',"tool":' + pinoString(tool);
  return principal === null ? named : named + ',"principal":' + pinoString(principal);
}
