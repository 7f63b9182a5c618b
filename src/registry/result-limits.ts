// The two limits on what a tool returns, and the one shape of `output_limit`
// details (SPEC section 5 step 9). They are different kinds of limit: the
// inline budget decides what the caller sees inline and what is spilled to an
// artifact (a larger result is not refused); the flood cap is where a runner
// stops a tool that writes without end (the call fails with output_limit).

/**
 * The inline budget of a result when no policy names one (policy and manifest
 * YAML key `limits.maxResultBytes`): blocks that do not fit are spilled.
 */
export const DEFAULT_INLINE_BUDGET_BYTES = 1_048_576;

/**
 * The flood cap: bytes a runner takes from one tool call (its result, a process's
 * stdout and stderr) before it stops the tool with output_limit. A result above the
 * inline budget is spilled, so this cap only stops floods.
 */
export const FLOOD_CAP_BYTES = 128 * 1024 * 1024;

/** Why a call ended with output_limit, when the bytes alone do not say it. */
type OutputLimitReason = 'flood_cap' | 'host_only_too_large';

/** The details of every `output_limit`: the limit, and the facts known of this call. */
interface OutputLimitDetails {
  readonly reason?: OutputLimitReason;
  /** Bytes of the result or output, as far as they were counted. */
  readonly bytes?: number;
  /** The limit it met, in bytes: the inline budget or the flood cap. */
  readonly limit: number;
  /** Where the whole result is stored (a spilled result of a tool with an outputSchema). */
  readonly uri?: string;
}

/** `output_limit` details in their one spelling and order, without absent facts. */
export function outputLimitDetails(facts: OutputLimitDetails): Record<string, unknown> {
  return {
    ...(facts.reason !== undefined ? { reason: facts.reason } : {}),
    ...(facts.bytes !== undefined ? { bytes: facts.bytes } : {}),
    limit: facts.limit,
    ...(facts.uri !== undefined ? { uri: facts.uri } : {}),
  };
}
