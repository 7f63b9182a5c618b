// The seam between the supervisor and telemetry (SPEC section 6.2): the
// supervisor reports stage transitions (CallContext.enter) and nothing else.
// With telemetry off there is no CallTrace at all, so a call pays one
// optional-chaining check per stage. Stages are plain names here (the
// supervisor's STAGES): telemetry sits below the supervisor and imports nothing of it.

/** One call's trace: the protocol layer opens it, the supervisor marks stages, the protocol layer ends it. */
export interface CallTrace {
  /** The call moved to `stage`: the previous stage's span ends, a traced stage's span starts. */
  enterStage(stage: string): void;
}
