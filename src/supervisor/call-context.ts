// CallContext: what the stages of one call learn about it, in one place, so
// the journal record and the log line written in `finally` see every fact
// (tool, decision, rule, approval) however far the call got.
import type { ApprovedBy, CallStart } from '../audit/call-record.js';
import { newCallId } from './call-id.js';
import { hashArgs } from '../audit/hash.js';
import { performance } from 'node:perf_hooks';
import { recordStageTime, stageTimesOn } from '../diagnostics/stage-times.js';
import type { Logger } from '../log.js';
import { callLogger, type CallLogger } from './call-logger.js';
import type { ToolView } from '../policy/types.js';
import type { CallControl } from './call-control.js';
import type { Stage } from './stages.js';
import type { CallRequest } from './types.js';

export class CallContext {
  /** UUIDv7: ordered by time, so the journal's unique index on call ids is appended to (call-id.ts). */
  readonly callId = newCallId();
  readonly startedAt = Date.now();
  /** The stage running now; after a failure, the stage that decided it. */
  stage: Stage = 'session-limits';
  /** The tool, once lookup found it (after any rewrite). */
  view: ToolView | undefined;
  /** sha256 of the canonical JSON of the arguments (`{}` when absent). */
  readonly argsHash: string;
  decision: CallStart['decision'] = 'deny';
  rule: string | null = null;
  approval: CallStart['approval'] = null;
  idempotencyKey: string | null = null;
  /** True once the write-ahead `started` record exists: finish() closes it, else record() writes one. */
  journaled = false;
  /** True once tool.started was sent: only then do tool.completed / tool.failed follow. */
  started = false;
  /** Network attempts of the run (egress proxy, ctx.fetch), for the journal record. */
  readonly egress = { admitted: 0, refused: 0 };
  /** Who approved the call (SPEC section 7.1): the client, an operator (approverName), or nobody. */
  approvedBy: ApprovedBy | null = null;
  approverName: string | null = null;
  /** sha256 of the merged policy in force; null where the host has none (tests). */
  policyDigest: string | null = null;
  /** The redacted, bounded arguments, kept under `journal.arguments: redacted`; else null. */
  argumentsText: string | null = null;
  /** When the current stage began (performance.now), only while the bench records stage times. */
  #stageStartedAt: number | undefined = stageTimesOn() ? performance.now() : undefined;
  readonly logger: CallLogger;

  constructor(
    readonly request: CallRequest,
    /** The call's termination control: cancel, shutdown, deadline, the first reason. */
    readonly control: CallControl,
    readonly sessionId: string,
    logger: Logger,
    /** The authenticated principal (HTTP); null on stdio. */
    readonly principal: string | null = null,
  ) {
    this.argsHash = safeHashArgs(request.args);
    this.logger = callLogger(logger, { callId: this.callId, tool: request.name, principal });
  }

  /** Marks the start of a stage (for logs and for the stage named with a failure). */
  enter(stage: Stage): void {
    this.lap(this.stage);
    this.stage = stage;
    this.request.trace?.enterStage(stage);
  }

  /**
   * Times what ran since the last mark as `stage`, without changing the stage
   * the call's log line names (the bench's stage times; a no-op otherwise).
   */
  lap(stage: Stage): void {
    if (this.#stageStartedAt === undefined) return;
    const now = performance.now();
    recordStageTime(this.toolName, stage, now - this.#stageStartedAt);
    this.#stageStartedAt = now;
  }

  /** The tool name the journal records: the resolved tool, else the name asked for. */
  get toolName(): string {
    return this.view?.manifest.name ?? this.request.name;
  }

  /** The journal's start record with what is known now. */
  toStart(): CallStart {
    return {
      id: this.callId,
      sessionId: this.sessionId,
      principal: this.principal,
      tool: this.toolName,
      argsHash: this.argsHash,
      sideEffect: this.view ? (this.view.manifest.sideEffect ?? 'unclassified') : null,
      decision: this.decision,
      rule: this.rule,
      approval: this.approval,
      idempotencyKey: this.idempotencyKey,
      startedAt: this.startedAt,
      policyDigest: this.policyDigest,
      definitionDigest: this.view ? this.view.definitionDigest : null,
      approvedBy: this.approvedBy,
      approverName: this.approverName,
      arguments: this.argumentsText,
    };
  }
}

// Arguments come from JSON, but a hash must never be the thing that throws.
function safeHashArgs(args: unknown): string {
  try {
    return hashArgs(args);
  } catch {
    return hashArgs(null);
  }
}
