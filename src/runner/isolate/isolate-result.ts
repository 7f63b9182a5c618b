// How a call's end, as the isolate process reports it, reads on the host: the
// tool's envelope, a module that did not load, or an isolated-vm failure. The
// frame is from an untrusted process: every string is bounded again here.
import type { Logger } from '../../log.js';
import { outputLimitDetails } from '../../registry/result-limits.js';
import { ISOLATE_WIRE_LIMITS } from '../../../sandbox/shared/limits.mjs';
import type { IsolateResultMessage } from '../../../sandbox/shared/messages.mjs';
import { failure, MAX_TOOL_MESSAGE_CHARS, parseToolEnvelope, type Outcome } from '../tool-envelope.js';
import { classifyIsolateError, isIvmFailure, isToolMemoryError } from './isolate-errors.js';

/** What reading a result needs of the tool. */
export interface IsolateResultFacts {
  readonly tool: string;
  readonly memoryMb: number;
  readonly floodCapBytes: number;
  /** The call's time limit (its control's `timeoutMs`), which a timeout reports. */
  readonly timeoutMs: number;
  readonly logger: Logger;
}

/**
 * The outcome of one `result` frame; `body` is the frame's body (a success's JSON).
 * A success's bytes are held to the flood cap here by the body's length, which the
 * frame's prefix gave (no count of the text): the isolate process measured the same
 * bytes before it sent them, but nothing it says is trusted.
 */
export function readIsolateResult(message: IsolateResultMessage, body: Buffer, facts: IsolateResultFacts): Outcome {
  switch (message.kind) {
    case 'envelope':
      if (message.envelope['ok'] === true) {
        if (body.length > facts.floodCapBytes) {
          return failure('output_limit', 'The tool result exceeds the output limit.', outputLimitDetails({ reason: 'flood_cap', bytes: body.length, limit: facts.floodCapBytes }));
        }
        return { ok: true, json: body.toString('utf8') };
      }
      return parseToolEnvelope(message.envelope, {
        source: 'isolate',
        floodCapBytes: facts.floodCapBytes,
        memoryLimit: { memoryMb: facts.memoryMb, isMemoryError: isToolMemoryError },
      });
    case 'load_error':
      return failure('tool_error', message.message.slice(0, MAX_TOOL_MESSAGE_CHARS) || 'The tool module could not be loaded.', { reason: 'load_failed' });
    case 'ivm_error': {
      const text = message.message.slice(0, ISOLATE_WIRE_LIMITS.maxIvmMessageChars);
      if (message.stage === 'evaluate' && !isIvmFailure(new Error(text))) {
        return failure('tool_error', `the tool module threw while loading: ${text}`.slice(0, MAX_TOOL_MESSAGE_CHARS), { reason: 'load_failed' });
      }
      const classified = classifyIsolateError(new Error(text), {
        isolateDisposed: message.isolateDisposed,
        ...(message.hostDisposeReason !== undefined ? { hostDisposeReason: message.hostDisposeReason } : {}),
        memoryMb: facts.memoryMb,
        timeoutMs: facts.timeoutMs,
      });
      if (classified.code === 'internal') facts.logger.error({ tool: facts.tool, ivm: text }, 'unexpected isolated-vm failure');
      return { ok: false, ...classified };
    }
  }
}
