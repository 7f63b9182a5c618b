// The two policy stages of a call (SPEC section 5 steps 3 and 5), both reading
// the one decision of policy/decide.ts (the same answer `explain` prints):
// exposure refuses what the policy denies or excluded, naming the rule; the
// policy stage lets the call go on to run or to its approval, logging what a
// shadow-mode organisation policy would have denied (journaled as would_deny).
import { HostError } from '../errors.js';
import { denialError, type CallDecision } from '../policy/decide.js';
import { decideForPrincipal, type PrincipalRule } from '../policy/principals.js';
import type { ToolView } from '../policy/types.js';
import { evaluateRules, evaluateShadowRules, type RuleRefusal } from '../policy/rules/evaluate-rules.js';
import type { CallContext } from './call-context.js';
import type { Journal } from '../audit/journal.js';
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

/**
 * The rules on arguments (SPEC section 4.1) for this call: throws `policy_denied` naming the
 * first denying rule (or the one that could not be evaluated), and returns the decision the
 * call goes on with (an `ask` rule makes an allowed call ask). A shadow rule that would deny
 * is logged and journaled as would_deny. Only called for a tool some rule names.
 */
export function checkRules(ctx: CallContext, view: ToolView, decision: CallDecision, args: Readonly<Record<string, unknown>>, redact: Redactor): CallDecision {
  const scope = view.rules;
  if (scope === undefined) return decision;
  const verdict = evaluateRules(scope, args, ctx.principal);
  if (verdict.effect === 'deny') {
    ctx.decision = 'deny';
    ctx.rule = verdict.rule.ref;
    throw ruleDenial(view.manifest.name, verdict, redact);
  }
  let decided = decision;
  if (verdict.effect === 'ask' && decision.effect === 'allow') {
    const reason = `the arguments match rule ${verdict.rule.name} (${verdict.rule.when})`;
    decided = { ...decision, effect: 'ask', rule: verdict.rule.ref, reason, journal: { decision: 'ask', rule: verdict.rule.ref } };
    ctx.decision = 'ask';
    ctx.rule = verdict.rule.ref;
  }
  const shadow = evaluateShadowRules(scope, args, ctx.principal);
  if (shadow.effect === 'deny') {
    ctx.logger.warn({ rule: shadow.rule.ref, ...(shadow.failure ? { failure: shadow.failure } : {}) }, 'shadow policy rule would deny this call; allowed');
    ctx.decision = 'would_deny';
    ctx.rule = shadow.rule.ref;
  }
  return decided;
}

function ruleDenial(tool: string, verdict: RuleRefusal, redact: Redactor): HostError {
  const { rule } = verdict;
  const reason =
    verdict.failure === undefined
      ? `the arguments match rule ${rule.name} (${rule.when})`
      : `rule ${rule.name} cannot be evaluated for these arguments (${verdict.failure}: ${verdict.detail ?? ''}), so it denies`;
  const denial = denialError(tool, { effect: 'deny', code: 'policy_denied', rule: rule.ref, reason, excluded: false, shadow: null, journal: { decision: 'deny', rule: rule.ref } }, redact);
  return new HostError(denial.code, denial.message, { ...denial.details, ...(verdict.failure ? { failure: verdict.failure } : {}) });
}

/** Principals as the rate windows count them: an HTTP principal by name, a stdio session by itself. */
export function ratePrincipal(ctx: CallContext): string {
  return ctx.principal === null ? `session:${ctx.sessionId}` : `principal:${ctx.principal}`;
}

/**
 * The `limits.rate` windows of this tool (SPEC section 4.1): counts the call in each, or
 * throws call_limit (reason rate, retryAfterMs) naming the full window's rule. The count
 * lives in the journal's store; a store that cannot count fails the call closed (internal).
 */
export async function checkRates(ctx: CallContext, view: ToolView, journal: Pick<Journal, 'takeRate'>): Promise<void> {
  const windows = view.rates;
  if (windows === undefined) return;
  let outcome;
  try {
    outcome = await journal.takeRate(ratePrincipal(ctx), windows);
  } catch (error) {
    throw new HostError('internal', 'The journal could not count this call against its rate limit; the call did not run.', { reason: 'journal_unavailable', stage: 'policy' }, { cause: error });
  }
  if (outcome.ok) return;
  const window = windows[outcome.index];
  if (window === undefined) throw new HostError('internal', 'The rate store named a window this tool does not have.', { stage: 'policy' });
  const retryAfterMs = Math.max(0, Math.ceil(outcome.retryAfterMs));
  throw new HostError('call_limit', `Rate limit reached for ${view.manifest.name}: ${window.calls} calls per ${window.per} (rule ${window.rule}); retry in ${Math.ceil(retryAfterMs / 1000)} s.`, {
    reason: 'rate',
    retryAfterMs,
    rule: window.rule,
    calls: window.calls,
    per: window.per,
  });
}
