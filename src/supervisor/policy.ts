// The two policy stages of a call (SPEC section 5 steps 3 and 5), both reading
// the one decision of policy/decide.ts (the same answer `explain` prints):
// exposure refuses what the policy denies or excluded, naming the rule; the
// policy stage lets the call go on to run or to its approval, logging what a
// shadow-mode organisation policy would have denied (journaled as would_deny).
import { HostError } from '../errors.js';
import { denialError, type CallDecision } from '../policy/decide.js';
import { decideForPrincipal, type PrincipalRule } from '../policy/principals.js';
import type { ToolView } from '../policy/types.js';
import type { CallLogger } from './call-logger.js';
import type { Redactor } from './redact.js';

/** Throws `policy_denied` or `unclassified_tool` when the decision denies the call. */
export function checkExposure(tool: string, decision: CallDecision, redact: Redactor): void {
  if (decision.effect === 'deny') throw denialError(tool, decision, redact);
}

/** The policy stage: the call runs (allow) or asks (approval.ts); a shadow deny is logged, not enforced. */
export function notePolicy(decision: CallDecision, logger: CallLogger): void {
  const shadow = decision.shadow;
  if (shadow?.effect === 'deny') logger.warn({ rule: shadow.rule, reason: shadow.reason, wouldDeny: shadow.code }, 'shadow policy would deny this call; allowed');
}

/** Throws `policy_denied` when a `principals:` rule keeps this caller from this tool (SPEC section 6.1). */
export function checkPrincipal(view: ToolView, principal: string | null, rules: readonly PrincipalRule[]): void {
  const decision = decideForPrincipal(rules, view.manifest.name, principal);
  if (decision.effect !== 'deny') return;
  // Worded like every other denial (decide.ts), with the principal among the facts.
  const denial = denialError(view.manifest.name, { effect: 'deny', code: 'policy_denied', rule: decision.rule, reason: decision.reason, excluded: false, shadow: null, journal: { decision: 'deny', rule: decision.rule } });
  throw new HostError(denial.code, denial.message, { ...denial.details, principal });
}
