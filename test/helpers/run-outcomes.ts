// Reading RunOutcomes in runner tests: the failure's code and details, or the
// success's JSON (raw text or parsed). A wrong kind of outcome fails the test
// with the outcome in the message.
import type { RunOutcome } from '../../src/runner/run-types.js';

export function failureOf(outcome: RunOutcome): { code: string; details: Record<string, unknown> } {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.output).slice(0, 500)}`);
  return { code: outcome.code, details: outcome.details };
}

/** The JSON text a runner returned, unparsed (process tools pass it through as is). */
export function jsonTextOf(outcome: RunOutcome): string {
  if (!outcome.ok || outcome.output.type !== 'json') throw new Error(`expected JSON output, got ${JSON.stringify(outcome).slice(0, 500)}`);
  return outcome.output.json;
}

/** The JSON value a runner returned. */
export function jsonOf(outcome: RunOutcome): unknown {
  return JSON.parse(jsonTextOf(outcome));
}
