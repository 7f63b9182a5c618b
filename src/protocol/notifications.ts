// What the host tells a client about a running call: progress (only when the
// request asked with a progressToken) and lifecycle events as log messages
// (where the era allows: legacy by logging/setLevel, modern by the request's
// logLevel). Nothing is sent once the request is cancelled.
import { LOG_LEVEL_META_KEY, type LoggingLevel } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import type { CallRequestContext } from './call-context.js';
import type { ProgressEvent } from '../runner/run-types.js';
import type { LifecycleEvent } from '../supervisor/types.js';

/** The logger name lifecycle events carry in notifications/message. */
const LIFECYCLE_LOGGER = 'toolhost';

/**
 * How long the answer to a call waits after its last progress notification. The SDK
 * clients (v1 and v2) run notification handlers a microtask later but responses at
 * once, and drop a request's progress handler when its response arrives: progress
 * read from the pipe in the same chunk as the response is lost. A short gap lets the
 * client read them apart. Only calls that asked for progress and got some wait. The gap
 * must outlast a client not scheduled for a while on a loaded machine, which then reads
 * both at once.
 */
const PROGRESS_SETTLE_MS = 250;

interface ProgressForwarder {
  /** The callback for the supervisor; undefined when the client asked for no progress. */
  readonly onProgress: ((event: ProgressEvent) => void) | undefined;
  /** Resolves once every progress notification is written and has had time to be read on its own. */
  settled(): Promise<void>;
}

/** The forwarder of every call that asked for no progress (it holds nothing of the call). */
const NO_PROGRESS: ProgressForwarder = Object.freeze({ onProgress: undefined, settled: async () => undefined });

/** Forwards a call's progress as notifications/progress (strictly increasing, nothing after a cancel). */
export function forwardProgress(ctx: CallRequestContext, progressToken: unknown, logger: Logger): ProgressForwarder {
  if (typeof progressToken !== 'string' && typeof progressToken !== 'number') return NO_PROGRESS;
  let last = -Infinity;
  let lastSentAtMs: number | undefined;
  const writes = new Set<Promise<void>>();
  const onProgress = (event: ProgressEvent): void => {
    // Clients require progress to increase per token; a tool that repeats itself is not forwarded.
    if (ctx.mcpReq.signal.aborted || !(event.progress > last)) return;
    last = event.progress;
    const params = {
      progressToken,
      progress: event.progress,
      ...(event.total !== undefined ? { total: event.total } : {}),
      ...(event.message !== undefined ? { message: event.message } : {}),
    };
    const write: Promise<void> = ctx.mcpReq
      .notify({ method: 'notifications/progress', params })
      .catch((error: unknown) => logger.debug({ err: String(error) }, 'progress notification not sent'))
      .finally(() => {
        writes.delete(write);
        lastSentAtMs = Date.now();
      });
    writes.add(write);
  };
  return {
    onProgress,
    async settled() {
      await Promise.all([...writes]);
      if (lastSentAtMs === undefined) return;
      const waitMs = lastSentAtMs + PROGRESS_SETTLE_MS - Date.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    },
  };
}

// RFC 5424 order, as MCP's LoggingLevel lists it.
const SEVERITY: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/**
 * The level a client asked log messages at for this request, or undefined when
 * it asked for none (SPEC section 6): legacy clients by logging/setLevel
 * (`legacyLevel`, kept per connection), modern clients by the request's logLevel.
 */
export function requestedLogLevel(ctx: CallRequestContext, legacyLevel: LoggingLevel | undefined): LoggingLevel | undefined {
  if (legacyLevel !== undefined) return legacyLevel;
  // The SDK types the envelope as {}; its keys are the reserved _meta names.
  const level = (ctx.mcpReq.envelope as Readonly<Record<string, unknown>> | undefined)?.[LOG_LEVEL_META_KEY];
  return typeof level === 'string' && SEVERITY.includes(level as LoggingLevel) ? (level as LoggingLevel) : undefined;
}

/**
 * Sends tool.started / tool.completed / tool.failed as notifications/message at
 * or above `threshold`; undefined (the supervisor then builds no event at all)
 * when the client asked for no log messages.
 */
export function forwardLifecycleEvents(ctx: CallRequestContext, threshold: LoggingLevel | undefined, logger: Logger): ((event: LifecycleEvent) => void) | undefined {
  if (threshold === undefined) return undefined;
  const least = SEVERITY.indexOf(threshold);
  return (event) => {
    if (ctx.mcpReq.signal.aborted) return;
    const level = event.type === 'tool.failed' ? 'warning' : 'info';
    if (SEVERITY.indexOf(level) < least) return;
    ctx.mcpReq.log(level, { ...event }, LIFECYCLE_LOGGER).catch((error: unknown) => {
      logger.debug({ err: String(error) }, 'lifecycle notification not sent');
    });
  };
}
