// A call's progress, log and denial events on their way from a tool to the
// supervisor, one reader for every runner (isolate frames, worker-thread
// messages, a persistent process's progress lines, an upstream server's
// progress). What arrives is unknown until sandbox/shared/readers.mjs narrows
// it, then bounded per call by EVENT_LIMITS, the same bounds the far side
// applies before sending: a tool that floods events costs the client at most
// maxEventsPerCall notifications, and its messages at most maxEventBytesPerCall.
import type { Logger } from '../log.js';
import { EVENT_LIMITS } from '../../sandbox/shared/limits.mjs';
import { readDenial, readLogLevel, readProgress } from '../../sandbox/shared/readers.mjs';
import type { RunOptions } from './run-types.js';

/** Where a call's events go: its run options' callbacks, and the host's log for what has no callback. */
interface CallEventsTarget {
  readonly options: Pick<RunOptions, 'onProgress' | 'onLog' | 'onDenied'>;
  readonly logger: Logger;
  /** What the host's log names the call by (`{ tool }`, `{ callId }`). */
  readonly facts: Readonly<Record<string, unknown>>;
}

/** One call's events: a new one per call, since the bounds count per call. */
export class CallEvents {
  #events = 0;
  #messageBytes = 0;
  #messagesSpent = false;
  #denials = 0;

  constructor(private readonly target: CallEventsTarget) {}

  /** A progress event as sent (`{ progress, total?, message? }`); past the byte budget it goes on without its message. */
  progress(value: unknown): void {
    const event = readProgress(value);
    if (event === undefined || !this.#count()) return;
    const message = event.message === undefined ? undefined : this.#message(event.message);
    this.target.options.onProgress?.({ progress: event.progress, ...(event.total !== undefined ? { total: event.total } : {}), ...(message !== undefined ? { message } : {}) });
  }

  /** A ctx.log line; a level that is not one reads as `info`. Past the byte budget a line is dropped (it is its message). */
  log(level: unknown, message: unknown): void {
    if (typeof message !== 'string' || !this.#count()) return;
    const text = this.#message(message);
    if (text === undefined) return;
    const known = readLogLevel(level);
    if (this.target.options.onLog) this.target.options.onLog(known, text);
    else this.target.logger.debug({ ...this.target.facts, level: known }, text);
  }

  /** A ctx.fs or ctx.fetch refusal; past maxDenialsPerCall a refusal is still a refusal, just not reported. */
  denied(value: unknown): void {
    const read = readDenial(value);
    if (read === undefined || this.#denials >= EVENT_LIMITS.maxDenialsPerCall) return;
    this.#denials++;
    const denial = {
      op: read.op.slice(0, EVENT_LIMITS.maxCodeChars),
      target: read.target.slice(0, EVENT_LIMITS.maxTargetChars),
      reason: read.reason.slice(0, EVENT_LIMITS.maxCodeChars),
    };
    this.target.logger.info({ ...this.target.facts, denial }, 'sandbox refused a ctx call');
    this.target.options.onDenied?.(denial);
  }

  /** Counts one event; false once the call has sent its maxEventsPerCall. */
  #count(): boolean {
    if (this.#events >= EVENT_LIMITS.maxEventsPerCall) return false;
    this.#events++;
    return true;
  }

  /** The message cut to maxMessageChars, or undefined once the call's messages passed maxEventBytesPerCall. */
  #message(message: string): string | undefined {
    if (this.#messagesSpent) return undefined;
    const text = message.length > EVENT_LIMITS.maxMessageChars ? message.slice(0, EVENT_LIMITS.maxMessageChars) : message;
    this.#messageBytes += Buffer.byteLength(text, 'utf8');
    if (this.#messageBytes <= EVENT_LIMITS.maxEventBytesPerCall) return text;
    this.#messagesSpent = true;
    return undefined;
  }
}
