// Approvals by an operator (SPEC section 7.2): when the client cannot be asked,
// or the policy says `approvals: {by: operator}`, the call is refused with
// approval_required and a pending approval is journaled; `toolhost approve`
// decides it (from any host of a fleet journal); the caller's repeat with
// `_meta["toolhost/approvalId"]` spends it: that tool, those arguments, once.
import { randomUUID } from 'node:crypto';
import type { Journal, ProjectedWrite } from '../audit/journal.js';
import { HostError } from '../errors.js';
import type { ToolView } from '../policy/types.js';
import { boundArguments } from './approval-arguments.js';
import type { Redactor } from './redact.js';

/** The `_meta` key a repeat call carries its approval id in. */
export const APPROVAL_ID_META = 'toolhost/approvalId';

/** Default lifetime of a pending operator approval (policy `approvals.expireAfterMs`). */
export const DEFAULT_APPROVAL_EXPIRY_MS = 60 * 60 * 1000;

const MAX_APPROVAL_ID_CHARS = 128;

/** What the approval stage needs to involve an operator. */
export interface OperatorApprovals {
  readonly journal: Pick<Journal, 'createApproval' | 'spendApproval'>;
  readonly by: 'client' | 'operator';
  readonly expireAfterMs: number;
  readonly sessionId: string;
  readonly callId: string;
  /** The HTTP principal asking; null on stdio. */
  readonly principal: string | null;
  /**
   * The flags `toolhost approve` needs to find this journal (`--state DIR` or `--journal URL`,
   * absolute, shell-quoted, never a password), so the command in approval_required works from
   * any folder; empty when the default state folder is meant.
   */
  readonly journalFlags: string;
  /** Redacts the arguments the pending approval keeps. */
  readonly redact: Redactor;
}

/** The call a pending approval is asked for. */
interface ApprovalSubject {
  readonly view: ToolView;
  readonly args: Readonly<Record<string, unknown>>;
  readonly argsHash: string;
  /** What the call would write (the tool's `effects`); empty when it declares none. */
  readonly effects: readonly ProjectedWrite[];
}

/** The approval id of a repeat call; undefined when absent; approval_denied when it is not a short string. */
export function readApprovalId(meta: Readonly<Record<string, unknown>>, rule: string | null): string | undefined {
  const id = meta[APPROVAL_ID_META];
  if (id === undefined || id === null) return undefined;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_APPROVAL_ID_CHARS) {
    throw new HostError('approval_denied', `_meta["${APPROVAL_ID_META}"] must be the id toolhost approve was given.`, { rule, reason: 'malformed' });
  }
  return id;
}

/** Journals a pending approval (with its arguments and projected effect) and refuses the call with approval_required naming it. */
export async function requestOperatorApproval(operator: OperatorApprovals, subject: ApprovalSubject, rule: string | null): Promise<never> {
  const { view, argsHash } = subject;
  const now = Date.now();
  const approval = await operator.journal.createApproval({
    id: randomUUID(),
    tool: view.manifest.name,
    argsHash,
    sideEffect: view.manifest.sideEffect ?? 'unclassified',
    rule,
    principal: operator.principal,
    sessionId: operator.sessionId,
    callId: operator.callId,
    createdAt: now,
    expiresAt: now + operator.expireAfterMs,
    definitionDigest: view.definitionDigest,
    arguments: boundArguments(subject.args, operator.redact),
    effects: subject.effects,
  });
  const command = approveCommand(approval.id, operator.journalFlags);
  throw new HostError(
    'approval_required',
    `The tool ${view.manifest.name} needs an operator's approval (rule ${rule}): an operator runs \`${command}\` (or decides it in \`toolhost console\`), then repeat this call with _meta["${APPROVAL_ID_META}"] set to "${approval.id}".`,
    { rule, approvalId: approval.id, expiresAt: approval.expiresAt, approveCommand: command },
  );
}

/** The exact command that approves `id` in the journal the flags name. */
function approveCommand(id: string, journalFlags: string): string {
  return `toolhost approve ${id}${journalFlags === '' ? '' : ` ${journalFlags}`}`;
}

/** Spends an approved id for this tool and these arguments, returning the operator who approved it; throws approval_denied (or approval_required while pending). */
export async function spendOperatorApproval(operator: OperatorApprovals, view: ToolView, argsHash: string, id: string, rule: string | null): Promise<string | null> {
  const spent = await operator.journal.spendApproval(id, view.manifest.name, argsHash, operator.callId, view.definitionDigest);
  if (spent.ok) return spent.approval.decidedBy;
  if (spent.reason === 'pending') {
    const command = approveCommand(id, operator.journalFlags);
    throw new HostError('approval_required', `Approval ${id} for ${view.manifest.name} is still waiting for an operator (\`${command}\`).`, {
      rule,
      approvalId: id,
      state: 'pending',
      approveCommand: command,
    });
  }
  throw new HostError('approval_denied', `Approval ${id} does not allow this call (${spent.reason}).`, { rule, approvalId: id, reason: spent.reason });
}
