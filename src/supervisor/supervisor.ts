// The supervisor: every tools/call goes through the stages of SPEC section 5,
// in the order of STAGES (stages.ts), one short call each into stages/<stage>.ts,
// which returns its facts or throws a HostError; this file alone writes them to
// the call's CallContext. Exactly one journal write closes every call, from
// `finally` (the finish stage); unknown throwables become `internal` in the one
// outer catch.
import { newCallId } from './call-id.js';
import { sha256Hex } from '../audit/hash.js';
import { isJournalError } from '../audit/journal.js';
import { HostError, hostError, isHostError, withToolRecovery } from '../errors.js';
import type { Logger } from '../log.js';
import type { DefinitionDrift } from '../policy/definition-drift.js';
import { decideForPrincipal } from '../policy/principals.js';
import { denialError, readToolDecision, type CallDecision } from '../policy/tool-decision.js';
import type { SessionPolicy, ToolView } from '../policy/types.js';
import { emitStarted, forwardProgress } from './call-events.js';
import { CallContext } from './call-context.js';
import { concludeCall, type CallControl } from './call-control.js';
import { openCallSession, type CallSession } from './call-session.js';
import { isBeforeRun, journalFailure } from './journal-failure.js';
import { journaledArguments } from './journaled-arguments.js';
import { DEFAULT_APPROVAL_EXPIRY_MS } from './operator-approval.js';
import type { Redactor } from './redact.js';
import { redactError } from './redact-error.js';
import type { RequestStateSigner } from './request-state.js';
import type { ArtifactSink } from './result/staged.js';
import { redactUpstreamResource } from './upstream-resource.js';
import type { RunnerCache } from './runner-cache.js';
import type { SessionCounters } from './session-counters.js';
import { countOutcome } from './session-outcome.js';
import { approvalFacts, obtainApproval, refusedApproval, type ApprovalResult } from './stages/approval.js';
import { finishCall, type CallEnd } from './stages/finish.js';
import { checkIdempotency, readIdempotencyKey, serializeForReplay, type ReplayedResult } from './stages/idempotency.js';
import { beginJournal, type CallJournal } from './stages/journal.js';
import { lookupTool, peekTool } from './stages/lookup.js';
import { enforcePolicy } from './stages/policy.js';
import { checkResult } from './stages/result-checks.js';
import { applyRules, ratePrincipal, takeRate } from './stages/rules.js';
import { runTool } from './stages/run.js';
import { enterSession, SessionLimits, slotKindFor, type ReleaseSlot } from './stages/session-limits.js';
import { validateArgs } from './stages/validate-args.js';
import { declareTools } from './tool-declarations.js';
import type { CallOutcome, CallRequest, Supervisor, ToolDeclaration } from './types.js';

/** What the supervisor reads of the host configuration (HostConfig provides it). */
interface SupervisorConfig {
  readonly tools: ReadonlyMap<string, ToolView>;
  readonly session: SessionPolicy;
}

/** Everything the supervisor is built from; host.ts assembles it. */
interface SupervisorDeps {
  readonly config: SupervisorConfig;
  readonly journal: CallJournal;
  readonly artifacts: ArtifactSink & { get(uri: string): Promise<{ mimeType: string; bytes: Uint8Array } | undefined> | { mimeType: string; bytes: Uint8Array } | undefined };
  readonly runners: RunnerCache;
  readonly signer: RequestStateSigner;
  readonly redact: Redactor;
  /** The session calls count against unless a request names its own; it outlives a reload. */
  readonly session: SessionCounters;
  readonly logger: Logger;
  /** How long an elicitation may wait for the user before it counts as a denial. */
  readonly approvalTimeoutMs: number;
  /** The flags `toolhost approve` needs to find this host's journal (operator-approval.ts); default none. */
  readonly approveJournalFlags?: string;
  /** How long close() waits for in-flight calls to stop after cancelling them. */
  readonly closeGraceMs?: number;
  /** Upstream tools: remembers the resource links a server returned (as shown, and the server's own URI), so resources/read may forward them. */
  readonly onResourceLink?: (view: ToolView) => (shownUri: string, upstreamUri: string) => void;
  /** resources/read of a link an upstream server returned or an MCP Apps resource (forwarded to that server only; redacted here). */
  readonly readUpstreamResource?: (uri: string) => Promise<{ readonly mimeType: string; readonly bytes: Uint8Array } | undefined>;
  /** Pinned server tools changed by their server since the host loaded (refused); absent when pins are off. */
  readonly drift?: Pick<DefinitionDrift, 'check' | 'checkApproved'>;
  /** Releases what the host built around the supervisor (the journal), after runners are closed. */
  readonly onClose?: () => Promise<void> | void;
}

/** Builds the supervisor the protocol layer and `toolhost call` drive. */
export function createSupervisor(deps: SupervisorDeps): Supervisor {
  return new CallSupervisor(deps);
}

/** The approval of a call whose decision is not `ask`. */
const NOT_NEEDED: ApprovalResult = Object.freeze({ status: 'not_needed' });

/** Frees the call's concurrency slot, once. */
function releaseSlot(slot: { release?: ReleaseSlot | undefined }): void {
  const release = slot.release;
  slot.release = undefined;
  release?.();
}

/** The journal end of a replayed call: the recorded result's hash and size. */
function replayEnd(replay: ReplayedResult): CallEnd {
  return { kind: 'result', payloadHash: sha256Hex(replay.serialized), payloadBytes: Buffer.byteLength(replay.serialized), replay: replay.serialized };
}

class CallSupervisor implements Supervisor {
  readonly session: SessionPolicy;
  readonly #deps: SupervisorDeps;
  /** Concurrency slots of the callers without their own (stdio, `toolhost call`). */
  readonly #limits: SessionLimits;
  readonly #shutdown = new AbortController();
  /** The controls of the calls in flight: close() stops them, as a cancel would, and waits for them to end. */
  readonly #inflight = new Set<CallControl>();
  /** Resolved when the last call in flight has ended (close() waits on them). */
  #drained: Array<() => void> = [];
  readonly #declarations: readonly ToolDeclaration[];
  #closing: Promise<void> | undefined;

  constructor(deps: SupervisorDeps) {
    this.#deps = deps;
    this.session = deps.config.session;
    this.#limits = new SessionLimits(this.session.maxCallsPerSession, this.session.maxConcurrency, this.session.maxConsecutiveFailures, deps.session);
    this.#declarations = Object.freeze(declareTools(deps.config.tools, deps.redact));
  }

  listTools(principal: string | null = null): readonly ToolDeclaration[] {
    const rules = this.session.principalRules ?? [];
    if (principal === null || rules.length === 0) return this.#declarations;
    return this.#declarations.filter((tool) => decideForPrincipal(rules, tool.name, principal).effect === 'allow');
  }

  openSession(principal: string): CallSession {
    return openCallSession(principal, this.session);
  }

  async readArtifact(uri: string): Promise<{ readonly mimeType: string; readonly bytes: Uint8Array } | undefined> {
    const artifact = await this.#deps.artifacts.get(uri);
    if (artifact) return artifact;
    const read = await this.#deps.readUpstreamResource?.(uri);
    if (!read) return undefined;
    const redacted = redactUpstreamResource(read, this.#deps.redact);
    if (redacted.ok) return redacted.resource;
    this.#deps.logger.warn({ uri: this.#deps.redact(uri), reason: redacted.reason }, 'upstream resource not served: it holds the value of a secret in binary data');
    return undefined;
  }

  callTool(request: CallRequest): Promise<CallOutcome> {
    const control = request.control;
    if (this.#closing) {
      control.dispose();
      return Promise.resolve({ kind: 'error', callId: newCallId(), error: hostError('cancelled', { reason: 'shutdown' }) });
    }
    // Host shutdown cancels every call, as a client cancel would (close() stops every control
    // in #inflight, instead of each call listening on a shutdown signal); the run stage arms the deadline.
    this.#inflight.add(control);
    return this.#call(request, control);
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  // One call: its stages, then its one journal write; the answer goes out only once that write is committed.
  async #call(request: CallRequest, control: CallControl): Promise<CallOutcome> {
    const counters = request.caller?.counters ?? this.#deps.session;
    const ctx = new CallContext(request, control, counters.id, this.#deps.logger, request.caller?.principal ?? null);
    ctx.policyDigest = this.session.policyDigest ?? null;
    const slot: { release?: ReleaseSlot | undefined; end?: CallEnd } = {};
    try {
      let outcome = await this.#stages(ctx, request, control, counters, slot);
      releaseSlot(slot);
      ctx.lap(ctx.stage);
      countOutcome(counters, ctx, slot.end);
      // The call is still in #inflight: alone when it is the only one there.
      const unrecorded = await finishCall(this.#deps.journal, ctx, slot.end, this.#inflight.size === 1);
      if (unrecorded !== undefined) outcome = { kind: 'error', callId: ctx.callId, error: unrecorded };
      ctx.lap('finish');
      return outcome;
    } finally {
      releaseSlot(slot);
      this.#ended(control);
    }
  }

  // The stage table of SPEC section 5, in order (STAGES, one file each under stages/). Each stage returns
  // its facts or throws; this is the one place that writes them to the CallContext. Never throws: every
  // failure is an outcome.
  async #stages(
    ctx: CallContext,
    request: CallRequest,
    control: CallControl,
    counters: SessionCounters,
    slot: { release?: ReleaseSlot | undefined; end?: CallEnd },
  ): Promise<CallOutcome> {
    const { config, journal, redact } = this.#deps;
    try {
      ctx.enter('session-limits');
      // A free slot is granted at once; a queued call waits for its turn.
      slot.release = await enterSession(request.caller?.limits ?? this.#limits, slotKindFor(peekTool(config.tools, request.name, this.session.onUnknownTool)), control, counters);

      ctx.enter('lookup');
      const { view, rewrittenFrom } = lookupTool(config.tools, request.name, this.session.onUnknownTool);
      ctx.view = view;
      if (rewrittenFrom !== undefined) ctx.logger.info({ requested: rewrittenFrom, tool: view.manifest.name }, 'unknown tool rewritten by policy');

      ctx.enter('policy');
      const decision = readToolDecision(view);
      ({ decision: ctx.decision, rule: ctx.rule } = decision.journal);
      enforcePolicy({ view, decision, principal: ctx.principal, principalRules: this.session.principalRules ?? [], drift: this.#deps.drift, redact, logger: ctx.logger });

      ctx.enter('validate-args');
      const args = validateArgs(view.manifest, request.args);
      if (this.session.journalArguments === 'redacted') ctx.argumentsText = journaledArguments(args, redact);
      // A malformed key is the caller's mistake, refused before anyone is asked to approve.
      ctx.idempotencyKey = readIdempotencyKey(request.meta);

      ctx.enter('rules');
      // Rules on arguments only for a tool some rule names: no work for the rest.
      const decided = view.rules === undefined ? decision : applyRules(view, decision, args, ctx.principal, ctx.logger);
      ({ decision: ctx.decision, rule: ctx.rule } = decided.journal);
      if (decided.effect === 'deny') throw denialError(view.manifest.name, decided, redact);
      // No hop for a tool without a rate window.
      if (view.rates !== undefined) await takeRate(journal, view, ratePrincipal(ctx.principal, ctx.sessionId));

      ctx.enter('approval');
      // Only an `ask` needs an approval: no hop for the rest.
      const approval = decided.effect === 'ask' ? await this.#approve(ctx, args, decided) : NOT_NEEDED;
      ({ approval: ctx.approval, approvedBy: ctx.approvedBy, approverName: ctx.approverName } = approvalFacts(approval));
      // An approval is for the definition the person saw: one its server changed meanwhile does not run.
      if (approval.status === 'approved') this.#deps.drift?.checkApproved(view);
      if (approval.status === 'input_required') {
        slot.end = { kind: 'input_required' };
        return { kind: 'input_required', callId: ctx.callId, requestState: approval.requestState, message: approval.message };
      }

      // After policy and approval: a replay is an answer like any other, given only to a
      // call the policy in force now allows (a tool that needs an approval since, gets asked).
      ctx.enter('idempotency');
      // A stage with nothing to wait for answers undefined at once: awaited only when it returns a promise.
      const lookup = checkIdempotency(journal, view.manifest.name, ctx.idempotencyKey, ctx.argsHash);
      const replay = lookup === undefined ? undefined : await lookup;
      if (replay) {
        slot.end = replayEnd(replay);
        return this.#replayed(ctx, replay);
      }

      ctx.enter('journal');
      // Another host (or call) may have claimed the key since the check above: then its result, or a refusal.
      const writing = beginJournal(journal, ctx);
      const written = writing === undefined ? undefined : await writing;
      if (written?.kind === 'held') {
        slot.end = replayEnd(written.replay);
        return this.#replayed(ctx, written.replay);
      }
      if (written?.kind === 'begun') ctx.journaled = true;

      ctx.enter('run');
      emitStarted(ctx);
      ctx.started = true;
      const egress = ctx.egress;
      const output = await runTool({
        ctx,
        runner: this.#deps.runners.get(view),
        runSpec: view.runSpec,
        args,
        timeoutMs: view.limits.timeoutMs,
        redact,
        onProgress: forwardProgress(ctx, redact),
        onEgress: (attempt) => (attempt.admitted ? egress.admitted++ : egress.refused++),
      });

      ctx.enter('result-checks');
      const shaped = await checkResult({ view, output, redact, artifacts: this.#deps.artifacts, onResourceLink: this.#deps.onResourceLink?.(view) });
      const result: CallOutcome = {
        kind: 'result',
        callId: ctx.callId,
        content: shaped.content,
        ...(shaped.structuredContent ? { structuredContent: shaped.structuredContent } : {}),
        ...(shaped.meta ? { meta: shaped.meta } : {}),
      };
      // The replay copy is kept only for a call with an idempotency key (the finish stage drops it otherwise).
      const replayCopy = ctx.idempotencyKey === null ? null : serializeForReplay(result);
      slot.end = { kind: 'result', payloadHash: sha256Hex(shaped.payload), payloadBytes: shaped.payloadBytes, replay: replayCopy };
      return result;
    } catch (thrown) {
      if (ctx.stage === 'approval') ctx.approval = refusedApproval(thrown) ?? ctx.approval;
      const error = withToolRecovery(this.#toHostError(ctx, thrown), ctx.view?.manifest);
      slot.end = { kind: 'error', error };
      return { kind: 'error', callId: ctx.callId, error };
    }
  }

  // The call is over: its control lets go of everything, and close() hears when the last one ends.
  #ended(control: CallControl): void {
    control.dispose();
    this.#inflight.delete(control);
    if (this.#inflight.size > 0 || this.#drained.length === 0) return;
    const drained = this.#drained;
    this.#drained = [];
    for (const resolve of drained) resolve();
  }

  /** Resolves once no call is in flight. */
  #allEnded(): Promise<void> {
    if (this.#inflight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  #approve(ctx: CallContext, args: Readonly<Record<string, unknown>>, decision: CallDecision): Promise<ApprovalResult> {
    return obtainApproval({
      view: ctx.view as ToolView,
      args,
      argsHash: ctx.argsHash,
      decision,
      request: ctx.request,
      control: ctx.control,
      signer: this.#deps.signer,
      timeoutMs: this.#deps.approvalTimeoutMs,
      redact: this.#deps.redact,
      operator: {
        journal: this.#deps.journal,
        by: this.session.approvalsBy ?? 'client',
        expireAfterMs: this.session.approvalExpireAfterMs ?? DEFAULT_APPROVAL_EXPIRY_MS,
        sessionId: ctx.sessionId,
        callId: ctx.callId,
        // The HTTP principal (SPEC section 6.1); null on stdio.
        principal: ctx.principal,
        journalFlags: this.#deps.approveJournalFlags ?? '',
        redact: this.#deps.redact,
      },
    });
  }

  #replayed(ctx: CallContext, replay: ReplayedResult): CallOutcome {
    ctx.logger.info({ fromCallId: replay.fromCallId }, 'idempotency key seen before: replaying the recorded result');
    return {
      kind: 'result',
      callId: ctx.callId,
      content: replay.content,
      ...(replay.structuredContent ? { structuredContent: replay.structuredContent } : {}),
      ...(replay.meta ? { meta: replay.meta } : {}),
    };
  }

  // The one place unknown throwables become `internal`; concludeCall decides which reason ends the call.
  // Every error is redacted here, as it leaves: details quote what tools wrote.
  #toHostError(ctx: CallContext, thrown: unknown): HostError {
    if (isHostError(thrown)) {
      const ending = concludeCall(ctx.control, thrown);
      if (ending === thrown) return redactError(thrown, this.#deps.redact);
      return new HostError(ending.code, ending.message, ending.details, { cause: thrown });
    }
    // A defect stays `internal` whatever stopped the call; recorded as the reason if none was.
    ctx.control.settle('internal');
    // The journal failed before the tool ran: a cause the caller is told, as a result.
    if (isJournalError(thrown) && isBeforeRun(ctx.stage)) return journalFailure(thrown, ctx.stage);
    // Logged once, with the cause, by the end-of-call log line.
    return new HostError('internal', 'An internal error stopped this call.', { stage: ctx.stage }, { cause: thrown });
  }

  async #close(): Promise<void> {
    this.#shutdown.abort();
    // Each call stops as it would on its client's cancel, the signal aborting with the shutdown's reason.
    for (const control of this.#inflight) control.abort(this.#shutdown.signal.reason);
    const graceMs = this.#deps.closeGraceMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([this.#allEnded(), grace]);
    clearTimeout(timer);
    await this.#deps.runners.closeAll();
    // Calls still in flight now settle against closed runners; give them a moment to write their records.
    await Promise.race([this.#allEnded(), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    await this.#deps.onClose?.();
  }
}
