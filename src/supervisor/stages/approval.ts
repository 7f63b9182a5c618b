// The approval stage (SPEC section 5 step 6 and section 6), only when the decision is
// `ask`. Every doubtful path denies: a declined, cancelled, malformed,
// failed or timed-out answer is `approval_denied`; a client that cannot be
// asked gets `approval_required`; only `accept` with `approve: true` approves.
import type { ApprovedBy, CallStart } from '../../audit/call-record.js';
import { HostError, isHostError } from '../../errors.js';
import type { ToolView } from '../../policy/types.js';
import type { ApprovalPrompt, CallRequest, ElicitAnswer } from '../types.js';
import { throwIfCancelled } from './session-limits.js';
import type { CallDecision } from '../../policy/tool-decision.js';
import { CallControl } from '../call-control.js';
import { formatApprovalPrompt, MAX_PROMPT_CHARS } from '../approval-prompt.js';
import { projectEffects } from '../projected-effect.js';
import type { Redactor } from '../redact.js';
import type { RequestStateSigner } from '../request-state.js';
import { readApprovalId, requestOperatorApproval, spendOperatorApproval, type OperatorApprovals } from '../operator-approval.js';

type ApprovalStatus = 'not_needed' | 'approved';

export type ApprovalResult =
  /** `by` says who approved an `approved` call (the journal records it): the client, or an operator by name. */
  | { readonly status: ApprovalStatus; readonly by?: 'client' | 'operator'; readonly operatorName?: string | null }
  /** Modern era: the client must ask its user and retry with this state. */
  | { readonly status: 'input_required'; readonly requestState: string; readonly message: string };

export interface ApprovalInput {
  readonly view: ToolView;
  readonly args: Readonly<Record<string, unknown>>;
  readonly argsHash: string;
  /** The call's policy decision; only `ask` needs an approval. */
  readonly decision: CallDecision;
  readonly request: CallRequest;
  /** The call's control: its cancel (or the host's shutdown) ends the wait for an answer. */
  readonly control: CallControl;
  readonly signer: RequestStateSigner;
  /** How long an elicitation may take before it counts as a denial. */
  readonly timeoutMs: number;
  /** Pending approvals for an operator (SPEC section 7.2); without it, a client that cannot be asked gets approval_required only. */
  readonly operator?: OperatorApprovals;
  /** Redacts what the projected effect reads of the workspace (it reaches the client and the journal). */
  readonly redact: Redactor;
}

export { MAX_PROMPT_CHARS };

/** Resolves when the call may run; throws approval_denied, approval_required or cancelled otherwise. */
export async function obtainApproval(input: ApprovalInput): Promise<ApprovalResult> {
  const { decision, request, view } = input;
  if (decision.effect !== 'ask') return { status: 'not_needed' };
  const rule = decision.rule;
  const channel = request.approval;
  const { operator } = input;
  if (operator !== undefined) {
    // A repeat carrying an operator's approval id is decided by that approval alone.
    const approvalId = readApprovalId(request.meta, rule);
    if (approvalId !== undefined) {
      const operatorName = await spendOperatorApproval(operator, view, input.argsHash, approvalId, rule);
      return { status: 'approved', by: 'operator', operatorName };
    }
    if (operator.by === 'operator' || channel.kind === 'none') {
      return requestOperatorApproval(operator, { view, args: input.args, argsHash: input.argsHash, effects: await projectEffects(view.manifest, input.args, input.redact) }, rule);
    }
  }
  switch (channel.kind) {
    case 'none':
      throw new HostError('approval_required', `The tool ${view.manifest.name} needs an approval (rule ${rule}) and this client cannot be asked.`, {
        rule,
      });
    case 'input_required':
      return answerInputRequired(input, rule);
    case 'elicitation': {
      const answer = await elicitWithTimeout(channel.elicit.bind(channel), input);
      return approveOrDeny(answer, input, rule);
    }
  }
}

/** The prompt for one call: tool, class, arguments and, for a tool that declares `effects`, what it would write. */
async function buildApprovalPrompt(input: ApprovalInput): Promise<string> {
  const { view } = input;
  return formatApprovalPrompt({
    tool: view.manifest.name,
    sideEffect: view.manifest.sideEffect ?? 'unclassified',
    args: input.args,
    argsHash: input.argsHash,
    ...(input.decision.reason ? { reason: input.decision.reason } : {}),
    effects: await projectEffects(view.manifest, input.args, input.redact),
  });
}

/** True only for `action: accept` with `content.approve === true`. */
export function isApproval(answer: unknown): boolean {
  if (typeof answer !== 'object' || answer === null) return false;
  const { action, content } = answer as { action?: unknown; content?: unknown };
  if (action !== 'accept' || typeof content !== 'object' || content === null) return false;
  return (content as { approve?: unknown }).approve === true;
}

async function answerInputRequired(input: ApprovalInput, rule: string | null): Promise<ApprovalResult> {
  const { request, view, argsHash, signer } = input;
  const tool = view.manifest.name;
  if (request.requestState === undefined) {
    return { status: 'input_required', requestState: signer.issue(tool, argsHash, view.definitionDigest), message: await buildApprovalPrompt(input) };
  }
  const check = signer.verify(request.requestState, tool, argsHash, view.definitionDigest);
  if (!check.ok) {
    throw new HostError('approval_denied', `The approval state sent for ${tool} was refused (${check.reason}).`, { rule, reason: check.reason });
  }
  return approveOrDeny(request.approvalAnswer, input, rule);
}

function approveOrDeny(answer: ElicitAnswer | undefined, input: ApprovalInput, rule: string | null): ApprovalResult {
  if (isApproval(answer)) return { status: 'approved', by: 'client' };
  const reason = denialReason(answer);
  throw new HostError('approval_denied', `The call to ${input.view.manifest.name} was not approved (${reason}).`, { rule, reason });
}

function denialReason(answer: unknown): string {
  if (answer === undefined) return 'no_answer';
  if (typeof answer !== 'object' || answer === null) return 'malformed';
  if ('error' in answer) return 'error';
  const action = (answer as { action?: unknown }).action;
  if (action === 'decline' || action === 'cancel') return action === 'decline' ? 'declined' : 'cancelled';
  return action === 'accept' ? 'not_approved' : 'malformed';
}

type Elicit = (prompt: ApprovalPrompt, signal: AbortSignal) => Promise<ElicitAnswer>;

// The channel gets a signal, but an answer that never comes must not hold the
// call: the race settles on the approval's own deadline or the request's
// cancellation either way (one CallControl for the wait, its deadline the prompt's).
async function elicitWithTimeout(elicit: Elicit, input: ApprovalInput): Promise<ElicitAnswer | undefined> {
  const { control, view } = input;
  throwIfCancelled(control);
  // Built before the wait starts: reading the current file for the diff is not the person's time.
  const prompt: ApprovalPrompt = { message: await buildApprovalPrompt(input), tool: view.manifest.name, sideEffect: view.manifest.sideEffect ?? 'unclassified' };
  throwIfCancelled(control);
  // An elicitation takes a signal: the call's is made here (a call that asks is a rare one).
  // Not a second control of the call: the wait's own, its deadline the prompt's, following the call's.
  const waiting = new CallControl([control.signal], { timeoutMs: input.timeoutMs });
  try {
    const answered = Promise.resolve()
      .then(() => elicit(prompt, waiting.signal))
      .then(
        (answer) => ({ answer }),
        (error: unknown) => ({ answer: { error: error instanceof Error ? error.message : String(error) } as ElicitAnswer }),
      );
    const first = await Promise.race([answered, waiting.stopped]);
    if (first === 'timeout') {
      throw new HostError('approval_denied', `No approval for ${view.manifest.name} arrived in time.`, {
        rule: input.decision.rule,
        reason: 'timeout',
        timeoutMs: input.timeoutMs,
      });
    }
    if (typeof first === 'string') throw new HostError('cancelled', 'The call was cancelled while waiting for an approval.', {});
    return first.answer;
  } finally {
    waiting.dispose();
  }
}

/** What the journal records of an approval: the approval state, and who approved. */
interface ApprovalFacts {
  readonly approval: CallStart['approval'];
  readonly approvedBy: ApprovedBy | null;
  readonly approverName: string | null;
}

/** The journal's facts of an approval the call obtained (or did not need). */
export function approvalFacts(result: ApprovalResult): ApprovalFacts {
  if (result.status === 'input_required') return { approval: 'required', approvedBy: null, approverName: null };
  if (result.status === 'approved' && 'by' in result && result.by !== undefined) return { approval: 'approved', approvedBy: result.by, approverName: result.operatorName ?? null };
  return { approval: result.status, approvedBy: null, approverName: null };
}

/** The journal's approval state of a call whose approval failed with `error`; undefined when it says nothing about the approval. */
export function refusedApproval(error: unknown): CallStart['approval'] | undefined {
  if (!isHostError(error)) return undefined;
  return error.code === 'approval_required' ? 'required' : error.code === 'approval_denied' ? 'denied' : undefined;
}
