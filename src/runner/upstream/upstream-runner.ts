// The runner of one upstream tool: the call goes to its server profile's
// running instance (started on demand), and the answer becomes a RunOutcome.
// The server's isError is the tool's own failure (`tool_error`, its text
// bounded here and redacted by the supervisor); a process that died is
// `tool_crashed` (`memory_limit` when the kernel killed it at its memory limit); a server that cannot start is `sandbox_unavailable` naming why.
import type { Logger } from '../../log.js';
import { failRun } from '../process/process-outcome.js';
import type { Runner, RunSpec, UpstreamRef } from '../types.js';
import type { Job, RunOptions, RunOutcome } from '../run-types.js';
import type { UpstreamServers } from './upstream-servers.js';
import type { Acquired, ServerSlot } from './server-slot.js';

/** Longest upstream error text kept for the model (before redaction). */
const MAX_UPSTREAM_ERROR_CHARS = 2048;

interface UpstreamRunnerDeps {
  readonly logger: Logger;
  readonly upstream: UpstreamServers;
}

/** Builds the runner for one tool of an upstream server. */
export function createUpstreamRunner(spec: RunSpec & { readonly upstream: UpstreamRef }, deps: UpstreamRunnerDeps): Runner {
  const slot = deps.upstream.slotFor(spec);
  const logger = deps.logger.child({ tool: spec.name, runner: 'upstream' });
  return {
    mode: 'process',
    async run(job: Job, options: RunOptions): Promise<RunOutcome> {
      const startedMs = performance.now();
      try {
        const acquired = await acquireOutsideDeadline(slot, options);
        if (acquired === undefined)
          return failRun(
            options.control.reason === 'timeout' ? 'timeout' : 'cancelled',
            options.control.reason === 'timeout' ? { timeoutMs: options.control.timeoutMs } : {},
            startedMs,
          );
        if (!acquired.ok) {
          // The last lines of its stderr reach the model-visible text through details.stderrTail (supervisor/run.ts).
          const tail = acquired.stderrLines && acquired.stderrLines.length > 0 ? { stderrTail: acquired.stderrLines.join('\n') } : {};
          return failRun(
            'sandbox_unavailable',
            { reason: acquired.reason, server: spec.upstream.server, retryAfterMs: acquired.retryAfterMs, ...tail },
            startedMs,
            `The upstream server ${spec.upstream.server} is not available: ${acquired.reason}`.slice(0, 600),
          );
        }
        const answer = await acquired.instance.callTool(spec.upstream.tool, job.args, options);
        switch (answer.kind) {
          case 'result':
            return toOutcome(answer.result, startedMs);
          case 'timeout':
            return failRun('timeout', { timeoutMs: options.control.timeoutMs }, startedMs);
          case 'cancelled':
            return failRun('cancelled', {}, startedMs);
          case 'crashed':
            if (answer.end.isOomKilled === true) return failRun('memory_limit', { memoryMb: spec.memoryMb, reason: 'cgroup_oom', server: spec.upstream.server }, startedMs);
            return failRun(
              'tool_crashed',
              { reason: answer.end.reason, exitCode: answer.end.exitCode ?? null, signal: answer.end.signal ?? null, stderrTail: answer.end.stderrTail },
              startedMs,
            );
          case 'upstream_error':
            // The server's own answer, as an isError result is: the model reads why (a refused
            // connection, a missing table), redacted and bounded by the supervisor.
            return failRun('tool_error', { upstreamError: true, jsonRpcCode: answer.code }, startedMs, upstreamErrorMessage(answer.message));
          case 'protocol':
            return failRun(
              'invalid_output',
              { reason: 'upstream_protocol', message: answer.message },
              startedMs,
              `The upstream server's answer could not be read: ${answer.message}`,
            );
        }
      } catch (error) {
        logger.error({ callId: job.callId, err: error }, 'upstream runner failed');
        return failRun('internal', {}, startedMs);
      }
    },
    // The server's instances belong to the host's UpstreamServers, closed with it.
    close: async () => undefined,
  };
}

// The server's start (spawn, sandbox, MCP handshake) is not the call's time (SPEC section 3):
// the deadline is held while it runs. A cancel still ends the wait (undefined).
async function acquireOutsideDeadline(slot: ServerSlot, options: RunOptions): Promise<Acquired | undefined> {
  const { control } = options;
  if (slot.isRunning) return slot.acquire();
  const resume = control.pauseDeadline?.();
  try {
    const stopped = control.stopped.then(() => undefined);
    return await Promise.race([slot.acquire(), stopped]);
  } finally {
    resume?.();
  }
}

function toOutcome(result: unknown, startedMs: number): RunOutcome {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    return failRun('invalid_output', { reason: 'upstream_result_not_object' }, startedMs);
  }
  const record = result as Record<string, unknown>;
  if (record['isError'] === true) {
    const text = errorTextOf(record['content']);
    return failRun('tool_error', { upstreamError: true }, startedMs, text === '' ? 'The upstream tool reported an error.' : text);
  }
  return { ok: true, output: { type: 'mcp', result: record }, durationMs: Math.round(performance.now() - startedMs) };
}

function upstreamErrorMessage(message: string): string {
  const text = message.trim();
  return text === '' ? 'The upstream server answered with an error.' : `The upstream server answered with an error: ${text}`;
}

// The text blocks of an error result, joined and bounded: that is what the model may read.
function errorTextOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const block of content) {
    if (typeof block !== 'object' || block === null) continue;
    const value = (block as Record<string, unknown>)['text'];
    if ((block as Record<string, unknown>)['type'] === 'text' && typeof value === 'string') text += (text ? '\n' : '') + value.slice(0, MAX_UPSTREAM_ERROR_CHARS);
    if (text.length >= MAX_UPSTREAM_ERROR_CHARS) break;
  }
  return text.slice(0, MAX_UPSTREAM_ERROR_CHARS);
}
