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

/** A progress callback for one call, or undefined when the client asked for none. */
export function forwardProgress(ctx: ServerContext, progressToken: unknown, logger: Logger): ((event: ProgressEvent) => void) | undefined {
  if (typeof progressToken !== 'string' && typeof progressToken !== 'number') return undefined;
  let last = -Infinity;
  return (event) => {
    // Clients require progress to increase per token; a tool that repeats itself is not forwarded.
    if (ctx.mcpReq.signal.aborted || !(event.progress > last)) return;
    last = event.progress;
    const params = {
      progressToken,
      progress: event.progress,
      ...(event.total !== undefined ? { total: event.total } : {}),
      ...(event.message !== undefined ? { message: event.message } : {}),
    };
    ctx.mcpReq.notify({ method: 'notifications/progress', params }).catch((error: unknown) => {
      logger.debug({ err: String(error) }, 'progress notification not sent');
    });
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
