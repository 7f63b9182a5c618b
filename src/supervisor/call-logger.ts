// The log of one call: every line names the call (callId, tool, and the
// principal on HTTP), as the lines of a pino child with those bindings do, and
// reads the same. A child is not built per call because pino's child()
// serializes and redacts its bindings when it is built, the largest cost of
// starting a call, for a call that writes one line; here the names are merged
// into a line only when one is written (at a level the host logs). A line of flat
// facts (the end of nearly every call) is built by writeFlatLine, byte for byte
// pino's, without pino's generic path; anything else goes through pino.
import type { Logger } from '../log.js';
import { namesJson, writeFlatLine } from '../log-flat-line.js';

type CallLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** What the stages log through: `logger[level](facts, message)`. */
export type CallLogger = Record<CallLogLevel, (facts: Readonly<Record<string, unknown>>, message: string) => void>;

/** The names every line of a call carries, first, in this order. */
interface CallLogNames {
  readonly callId: string;
  readonly tool: string;
  readonly principal: string | null;
}

class NamedCallLogger implements CallLogger {
  /** The names as they appear in a line, made at the first line (null: not yet; undefined: not flat). */
  #namesJson: string | undefined | null = null;

  constructor(
    readonly base: Logger,
    readonly names: CallLogNames,
  ) {}

  trace(facts: Readonly<Record<string, unknown>>, message: string): void {
    this.#write('trace', facts, message);
  }
  debug(facts: Readonly<Record<string, unknown>>, message: string): void {
    this.#write('debug', facts, message);
  }
  info(facts: Readonly<Record<string, unknown>>, message: string): void {
    this.#write('info', facts, message);
  }
  warn(facts: Readonly<Record<string, unknown>>, message: string): void {
    this.#write('warn', facts, message);
  }
  error(facts: Readonly<Record<string, unknown>>, message: string): void {
    this.#write('error', facts, message);
  }
  fatal(facts: Readonly<Record<string, unknown>>, message: string): void {
    this.#write('fatal', facts, message);
  }

  #write(level: CallLogLevel, facts: Readonly<Record<string, unknown>>, message: string): void {
    if (!this.base.isLevelEnabled(level)) return;
    const { callId, tool, principal } = this.names;
    if (this.#namesJson === null) this.#namesJson = namesJson(callId, tool, principal);
    if (this.#namesJson !== undefined && writeFlatLine(this.base, level, this.#namesJson, facts, message)) return;
    // The names first, as a child's bindings come first; a fact of the same name wins, as in a parsed child line.
    this.base[level](principal === null ? { callId, tool, ...facts } : { callId, tool, principal, ...facts }, message);
  }
}

/** The logger of one call, over the host's logger. */
export function callLogger(base: Logger, names: CallLogNames): CallLogger {
  return new NamedCallLogger(base, names);
}
