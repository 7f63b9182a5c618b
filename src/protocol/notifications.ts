// What the host tells a client about a running call: progress (only when the
// request asked with a progressToken) and lifecycle events as log messages
// (where the era allows: legacy by logging/setLevel, modern by the request's
// logLevel). Nothing is sent once the request is cancelled.
import type { ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import type { ProgressEvent } from '../runner/wire.js';
import type { LifecycleEvent } from '../supervisor/types.js';

/** The logger name lifecycle events carry in notifications/message. */
export const LIFECYCLE_LOGGER = 'toolhost';

/**
 * How long the answer to a call waits after its last progress notification. The SDK
 * clients (v1 and v2) run notification handlers a microtask later but responses at
 * once, and drop a request's progress handler when its response arrives: progress
 * read from the pipe in the same chunk as the response is lost. A short gap lets the
 * client read them apart.
 */
export const PROGRESS_SETTLE_MS = 50;

export interface ProgressForwarder {
  /** The callback for the supervisor; undefined when the client asked for no progress. */
  readonly onProgress: ((event: ProgressEvent) => void) | undefined;
  /** Resolves once every progress notification is written and has had time to be read on its own. */
  settled(): Promise<void>;
}

/** Forwards a call's progress as notifications/progress (strictly increasing, nothing after a cancel). */
export function forwardProgress(ctx: ServerContext, progressToken: unknown, logger: Logger): ProgressForwarder {
  if (typeof progressToken !== 'string' && typeof progressToken !== 'number') return { onProgress: undefined, settled: async () => undefined };
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

/** Sends tool.started / tool.completed / tool.failed as notifications/message. */
export function forwardLifecycleEvents(ctx: ServerContext, logger: Logger): (event: LifecycleEvent) => void {
  return (event) => {
    if (ctx.mcpReq.signal.aborted) return;
    const level = event.type === 'tool.failed' ? 'warning' : 'info';
    ctx.mcpReq.log(level, { ...event }, LIFECYCLE_LOGGER).catch((error: unknown) => {
      logger.debug({ err: String(error) }, 'lifecycle notification not sent');
    });
  };
}
