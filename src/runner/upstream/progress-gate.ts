// An upstream server's progress for one call, on its way to the supervisor
// (which redacts it) and the client (which gets it only when it asked with a
// progressToken, strictly increasing, nothing after a cancel). The server's
// words are bounded here first, as the isolate process bounds a tool's: at
// most UPSTREAM_PROGRESS_LIMITS.maxEventsPerCall events and maxMessageBytesPerCall
// bytes of messages per call, each message cut to maxMessageChars; numbers
// that are not finite are dropped. A server that floods progress costs the
// client at most that many notifications.
import type { ProgressEvent } from '../run-types.js';

export const UPSTREAM_PROGRESS_LIMITS = {
  /** Progress notifications of one call passed on; later ones are dropped. */
  maxEventsPerCall: 1000,
  /** Longest progress message passed on, in characters. */
  maxMessageChars: 4000,
  /** UTF-8 bytes of progress messages one call may pass on; past it, events go without message. */
  maxMessageBytesPerCall: 256 * 1024,
} as const;

/** The SDK's onprogress callback for one call; undefined when nobody listens. */
export function gateProgress(forward: ((event: ProgressEvent) => void) | undefined): ((progress: unknown) => void) | undefined {
  if (!forward) return undefined;
  let events = 0;
  let messageBytes = 0;
  return (progress) => {
    if (typeof progress !== 'object' || progress === null) return;
    const { progress: done, total, message } = progress as Record<string, unknown>;
    if (typeof done !== 'number' || !Number.isFinite(done)) return;
    if (++events > UPSTREAM_PROGRESS_LIMITS.maxEventsPerCall) return;
    let text = typeof message === 'string' ? message.slice(0, UPSTREAM_PROGRESS_LIMITS.maxMessageChars) : undefined;
    if (text !== undefined) {
      messageBytes += Buffer.byteLength(text);
      if (messageBytes > UPSTREAM_PROGRESS_LIMITS.maxMessageBytesPerCall) text = undefined;
    }
    forward({ progress: done, ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}), ...(text !== undefined ? { message: text } : {}) });
  };
}
