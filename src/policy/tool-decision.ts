// The policy decision for a call to one tool (SPEC section 4 and section 5
// steps 3 and 5), the one answer both `serve` and `explain` use: the effect,
// the code and rule of a refusal, the reason shown to the caller, and what the
// journal records. It reads what the view settled when it was built (the
// exclusion, the decision by name or class, the shadow decision), so it is
// computed once per view (views are frozen) and the supervisor reads it per
// request without I/O or allocation. Rules on arguments are applied after it,
// by the supervisor's rules stage.
import { HostError } from '../errors.js';
import type { Decision, RuleRef, ToolView } from './types.js';

type DenialCode = 'policy_denied' | 'unclassified_tool';

export interface CallDecision {
  readonly effect: 'allow' | 'ask' | 'deny';
  /** deny only. */
  readonly code: DenialCode | null;
  /** The rule that decided (`file:line key` or `(built-in) key`); null for the built-in allow. */
  readonly rule: RuleRef | null;
  /** Why, for people: the prompt of an ask, the message of a deny; null for allow. */
  readonly reason: string | null;
  /** True when the tool conflicts with the policy as declared (the first kind of refusal). */
  readonly excluded: boolean;
  /** What a shadow-mode organisation file would decide instead, when stricter. */
  readonly shadow: Exclude<Decision, { readonly effect: 'allow' }> | null;
  /** Facts of an exclusion beyond rule and reason (a pin's digests); absent for most decisions. */
  readonly details?: Readonly<Record<string, unknown>>;
  /** What the journal records: a shadow deny of a call that runs is `would_deny` with the shadow's rule. */
  readonly journal: { readonly decision: 'allow' | 'ask' | 'deny' | 'would_deny'; readonly rule: RuleRef | null };
}

const decided = new WeakMap<ToolView, CallDecision>();

/** The decision the view settled for a call to its tool, before any rule on arguments. */
export function readToolDecision(view: ToolView): CallDecision {
  let decision = decided.get(view);
  if (decision === undefined) decided.set(view, (decision = Object.freeze(fromView(view))));
  return decision;
}

/** The error a denied call fails with; `redact` cleans the reason (it may quote manifest paths). */
export function denialError(tool: string, decision: CallDecision, redact: (text: string) => string = (text) => text): HostError {
  const rule = decision.rule ?? '(built-in)';
  const reason = redact(decision.reason ?? '');
  const what = decision.excluded ? 'is excluded' : decision.code === 'unclassified_tool' ? 'is unclassified and refused' : 'is denied';
  return new HostError(decision.code ?? 'policy_denied', `The tool ${tool} ${what} by policy rule ${rule}: ${oneLine(reason)}`, { rule, reason, ...decision.details });
}

function fromView(view: ToolView): CallDecision {
  const shadow = view.shadowDecision && view.shadowDecision.effect !== 'allow' ? view.shadowDecision : null;
  if (view.exclusion) {
    const { rule, reason, details } = view.exclusion;
    return { effect: 'deny', code: 'policy_denied', rule, reason, excluded: true, shadow, ...(details ? { details } : {}), journal: { decision: 'deny', rule } };
  }
  const decision = view.decision;
  const base =
    decision.effect === 'allow'
      ? { effect: 'allow' as const, code: null, rule: null, reason: null }
      : { effect: decision.effect, code: decision.effect === 'deny' ? decision.code : null, rule: decision.rule, reason: decision.reason };
  const wouldDeny = base.effect !== 'deny' && shadow?.effect === 'deny';
  return { ...base, excluded: false, shadow, journal: wouldDeny ? { decision: 'would_deny', rule: shadow.rule } : { decision: base.effect, rule: base.rule } };
}

// Messages are one sentence: reasons written for people may span lines.
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim().replace(/\.$/, '');
  return `${flat}.`;
}
