// The policy decision (SPEC section 5 step 5). The policy layer already
// decided per tool (ToolView.decision); here a call learns whether it runs
// outright or needs an approval, and a shadow-mode organisation policy that
// would deny it is logged and journaled as `would_deny` with its rule, while
// the call goes on.
import type { Logger } from '../log.js';
import type { ToolView } from '../policy/types.js';

export interface PolicyOutcome {
  readonly effect: 'allow' | 'ask';
  /** What the journal records as the decision. */
  readonly journalDecision: 'allow' | 'ask' | 'would_deny';
  /** The rule behind the decision (or behind would_deny); null for the built-in allow. */
  readonly rule: string | null;
  /** Why an approval is needed, for the prompt. */
  readonly askReason?: string;
}

/** allow or ask for a tool that passed exposure, with shadow denials logged. */
export function decidePolicy(view: ToolView, logger: Logger): PolicyOutcome {
  const decision = view.decision;
  // Exposure refused every deny already; treat a stray one as a bug, not as allow.
  if (decision.effect === 'deny') throw new Error(`decision deny reached the policy stage for ${view.manifest.name}`);
  const shadow = view.shadowDecision;
  const base: PolicyOutcome =
    decision.effect === 'ask'
      ? { effect: 'ask', journalDecision: 'ask', rule: decision.rule, askReason: decision.reason }
      : { effect: 'allow', journalDecision: 'allow', rule: null };
  if (shadow?.effect !== 'deny') return base;
  logger.warn({ rule: shadow.rule, reason: shadow.reason, wouldDeny: shadow.code }, 'shadow policy would deny this call; allowed');
  return { ...base, journalDecision: 'would_deny', rule: shadow.rule };
}

/** The decision and rule the journal records for a found tool before the policy stage refines it. */
export function journalDecisionOf(view: ToolView): { decision: 'allow' | 'deny' | 'ask'; rule: string | null } {
  if (view.exclusion) return { decision: 'deny', rule: view.exclusion.rule };
  const decision = view.decision;
  return decision.effect === 'allow' ? { decision: 'allow', rule: null } : { decision: decision.effect, rule: decision.rule };
}
