// The answer the isolate prelude and the worker entry both give for one call:
// `{ ok: true, json }` or `{ ok: false, code, message, name?, errorCode?, reason? }`.
// It comes from inside the sandbox, so it is checked field by field, never trusted.
import { defaultMessage, type ErrorDetails, type RunCode } from '../errors.js';
import { outputLimitDetails } from '../registry/result-limits.js';
import type { RunOutcome } from './run-types.js';

/**
 * Longest tool error message passed on, in characters: a generous bound, since the
 * supervisor redacts the message first and cuts it to what the caller sees after.
 */
export const MAX_TOOL_MESSAGE_CHARS = 8192;

/** Longest JSON pointer into a result that an invalid_output names, in characters. */
const MAX_RESULT_PATH_CHARS = 256;

const REASONS: Readonly<Record<string, string>> = {
  undefined: 'undefined',
  function: 'a function',
  symbol: 'a symbol',
  bigint: 'a BigInt',
  non_finite_number: 'a number that is not finite',
};

function describeReason(reason: string): string {
  return REASONS[reason] ?? reason;
}

/** A call's result before its duration is known. */
export type Outcome = { readonly ok: true; readonly json: string } | { readonly ok: false; readonly code: RunCode; readonly message: string; readonly details: ErrorDetails };

export function failure(code: RunCode, message: string, details: ErrorDetails): Outcome {
  return { ok: false, code, message, details };
}

export function toRunOutcome(outcome: Outcome, durationMs: number): RunOutcome {
  if (outcome.ok) return { ok: true, output: { type: 'json', json: outcome.json }, durationMs };
  return { ok: false, code: outcome.code, message: outcome.message, details: outcome.details, durationMs };
}

/** What differs between the two runners reading an envelope. */
export interface EnvelopeRules {
  /** Named in the `internal` message of a malformed envelope: "The isolate returned …". */
  readonly source: 'isolate' | 'worker';
  readonly floodCapBytes: number;
  /** A tool error that is really the sandbox's heap limit (isolated-vm reports it as a thrown error). */
  readonly memoryLimit?: { readonly memoryMb: number; readonly isMemoryError: (name: string | undefined, message: string) => boolean };
}

export function parseToolEnvelope(envelope: unknown, rules: EnvelopeRules): Outcome {
  const malformed = (): Outcome => failure('internal', `The ${rules.source} returned a malformed result.`, { reason: 'bad_envelope' });
  if (typeof envelope !== 'object' || envelope === null) return malformed();
  const record = envelope as Record<string, unknown>;
  if (record['ok'] === true && typeof record['json'] === 'string') return { ok: true, json: record['json'] };
  const message = typeof record['message'] === 'string' ? record['message'].slice(0, MAX_TOOL_MESSAGE_CHARS) : '';
  switch (record['code']) {
    case 'tool_error': {
      const name = typeof record['name'] === 'string' ? record['name'] : undefined;
      if (rules.memoryLimit?.isMemoryError(name, message)) {
        return failure('memory_limit', defaultMessage('memory_limit'), { memoryMb: rules.memoryLimit.memoryMb });
      }
      return failure('tool_error', message === '' ? defaultMessage('tool_error') : message, {
        ...(typeof record['errorCode'] === 'string' ? { errorCode: record['errorCode'] } : {}),
        ...(typeof record['reason'] === 'string' ? { reason: record['reason'] } : {}),
      });
    }
    case 'invalid_output': {
      const reason = typeof record['reason'] === 'string' ? record['reason'] : 'not_serializable';
      // A JSON pointer into the result, of the tool's keys: bounded here as well as where it was made.
      const path = typeof record['path'] === 'string' ? record['path'].slice(0, MAX_RESULT_PATH_CHARS) : undefined;
      return failure('invalid_output', `The tool returned a value that is not JSON${path !== undefined ? ` (${describeReason(reason)} at ${path})` : ''}.`, {
        reason,
        ...(path !== undefined ? { path } : {}),
      });
    }
    case 'output_limit':
      return failure('output_limit', 'The tool result exceeds the output limit.', outputLimitDetails({ reason: 'flood_cap', limit: rules.floodCapBytes }));
    default:
      return malformed();
  }
}
