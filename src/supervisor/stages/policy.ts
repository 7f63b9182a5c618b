// The policy stage (SPEC section 5 step 3): the one stage that refuses a tool
// by policy before its arguments are read. It enforces the decision the view
// settled (policy/tool-decision.ts, the same answer `explain` prints): a tool
// excluded by the policy as declared, denied by name or class, changed by its
// server since it was pinned, or kept from this caller by a `principals:` rule
// is refused with `policy_denied` (or `unclassified_tool`) naming the rule. A
// shadow-mode organisation policy that would deny is logged here and journaled
// as would_deny (the decision's journal facts); the call goes on.
import { denialError, type CallDecision } from '../../policy/tool-decision.js';
import type { DefinitionDrift } from '../../policy/definition-drift.js';
import { decideForPrincipal, type PrincipalRule } from '../../policy/principals.js';
import type { ToolView } from '../../policy/types.js';
import type { CallLogger } from '../call-logger.js';
import type { Redactor } from '../redact.js';

interface PolicyInput {
  readonly view: ToolView;
  /** readToolDecision(view): what the journal records of the call, whatever this stage answers. */
  readonly decision: CallDecision;
  /** The HTTP principal; null on stdio. */
  readonly principal: string | null;
  readonly principalRules: readonly PrincipalRule[];
  /** Pinned server tools changed since the host loaded; absent when pins are off. */
  readonly drift: Pick<DefinitionDrift, 'check'> | undefined;
  readonly redact: Redactor;
  readonly logger: CallLogger;
}

/** Returns when the policy lets the call go on (to its arguments, rules and approval); throws the denial otherwise. */
export function enforcePolicy(input: PolicyInput): void {
  const { view, decision, redact } = input;
  if (decision.effect === 'deny') throw denialError(view.manifest.name, decision, redact);
  input.drift?.check(view);
  refuseByPrincipal(view, input.principal, input.principalRules);
  const shadow = decision.shadow;
  if (shadow?.effect === 'deny') input.logger.warn({ rule: shadow.rule, reason: shadow.reason, wouldDeny: shadow.code }, 'shadow policy would deny this call; allowed');
}

/** Throws `policy_denied` when a `principals:` rule keeps this caller from this tool (SPEC section 6.1). */
function refuseByPrincipal(view: ToolView, principal: string | null, rules: readonly PrincipalRule[]): void {
  const decision = decideForPrincipal(rules, view.manifest.name, principal);
  if (decision.effect !== 'deny') return;
  // Worded like every other denial, with the principal among the facts.
  throw denialError(view.manifest.name, {
    effect: 'deny',
    code: 'policy_denied',
    rule: decision.rule,
    reason: decision.reason,
    excluded: false,
    shadow: null,
    details: { principal },
    journal: { decision: 'deny', rule: decision.rule },
  });
}
