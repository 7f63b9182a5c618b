// The rules stage (SPEC section 4.1, section 5 step 5): what needs the call's
// valid arguments. Rules on arguments (CEL) deny naming the rule, or make an
// allowed call ask; a shadow rule that would deny is logged and journaled as
// would_deny. Then the `limits.rate` windows count the call, so only calls the
// policy lets through count, before anyone is asked to approve one over its rate.
import type { Journal } from '../../audit/journal.js';
import { HostError } from '../../errors.js';
import { evaluateRules, evaluateShadowRules } from '../../policy/rules/evaluate-rules.js';
import type { CallDecision } from '../../policy/tool-decision.js';
import type { ToolView } from '../../policy/types.js';
import type { CallLogger } from '../call-logger.js';

/**
 * The decision the call goes on with after the rules on its arguments, with the
 * journal facts to record: `deny` (the supervisor throws its denialError) naming
 * the first denying rule (or the one that could not be evaluated), `ask` when an
 * `ask` rule matched an allowed call, else the tool's decision.
 */
export function applyRules(view: ToolView, decision: CallDecision, args: Readonly<Record<string, unknown>>, principal: string | null, logger: CallLogger): CallDecision {
  const scope = view.rules;
  if (scope === undefined) return decision;
  const verdict = evaluateRules(scope, args, principal);
  if (verdict.effect === 'deny') {
    const { rule } = verdict;
    const reason =
      verdict.failure === undefined
        ? `the arguments match rule ${rule.name} (${rule.when})`
        : `rule ${rule.name} cannot be evaluated for these arguments (${verdict.failure}: ${verdict.detail ?? ''}), so it denies`;
    return {
      effect: 'deny',
      code: 'policy_denied',
      rule: rule.ref,
      reason,
      excluded: false,
      shadow: null,
      ...(verdict.failure ? { details: { failure: verdict.failure } } : {}),
      journal: { decision: 'deny', rule: rule.ref },
    };
  }
  let decided = decision;
  if (verdict.effect === 'ask' && decision.effect === 'allow') {
    const reason = `the arguments match rule ${verdict.rule.name} (${verdict.rule.when})`;
    decided = { ...decision, effect: 'ask', rule: verdict.rule.ref, reason, journal: { decision: 'ask', rule: verdict.rule.ref } };
  }
  const shadow = evaluateShadowRules(scope, args, principal);
  if (shadow.effect === 'deny') {
    logger.warn({ rule: shadow.rule.ref, ...(shadow.failure ? { failure: shadow.failure } : {}) }, 'shadow policy rule would deny this call; allowed');
    decided = { ...decided, journal: { decision: 'would_deny', rule: shadow.rule.ref } };
  }
  return decided;
}

/** Rate windows count calls per principal: an HTTP principal by name, a stdio session by itself. */
export function ratePrincipal(principal: string | null, sessionId: string): string {
  return principal === null ? `session:${sessionId}` : `principal:${principal}`;
}

/**
 * The `limits.rate` windows of this tool (SPEC section 4.1): counts the call in each, or
 * throws call_limit (reason rate, retryAfterMs) naming the full window's rule. The count
 * lives in the journal's store; a store that cannot count fails the call closed (internal).
 */
export async function takeRate(journal: Pick<Journal, 'takeRate'>, view: ToolView, principal: string): Promise<void> {
  const windows = view.rates;
  if (windows === undefined) return;
  let outcome;
  try {
    outcome = await journal.takeRate(principal, windows);
  } catch (error) {
    throw new HostError(
      'internal',
      'The journal could not count this call against its rate limit; the call did not run.',
      { reason: 'journal_unavailable', stage: 'rules' },
      { cause: error },
    );
  }
  if (outcome.ok) return;
  const window = windows[outcome.index];
  if (window === undefined) throw new HostError('internal', 'The rate store named a window this tool does not have.', { stage: 'rules' });
  const retryAfterMs = Math.max(0, Math.ceil(outcome.retryAfterMs));
  throw new HostError(
    'call_limit',
    `Rate limit reached for ${view.manifest.name}: ${window.calls} calls per ${window.per} (rule ${window.rule}); retry in ${Math.ceil(retryAfterMs / 1000)} s.`,
    {
      reason: 'rate',
      retryAfterMs,
      rule: window.rule,
      calls: window.calls,
      per: window.per,
    },
  );
}
