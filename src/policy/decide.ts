// The policy decision for one call (SPEC section 5 step 5). Pure: everything
// it needs was settled when the view was built, so the supervisor can call it
// per request without I/O. Arguments are accepted for rules that look at them;
// no policy key does today, so the decision depends on the view alone.
import type { Decision, ToolView } from './types.js';

export interface CallDecision {
  /** What the host does. */
  readonly decision: Decision;
  /** What a shadow-mode organisation file would have done instead (journaled as would_deny). */
  readonly shadow?: Decision;
}

/** Decides a call to `view` with `args` (already validated against the input schema). */
export function decide(view: ToolView, args: Readonly<Record<string, unknown>>): Decision {
  void args;
  if (view.exclusion) {
    return { effect: 'deny', code: 'policy_denied', rule: view.exclusion.rule, reason: `excluded: ${view.exclusion.reason}` };
  }
  return view.decision;
}

/** The decision plus what shadow policy would have decided, for the journal. */
export function decideWithShadow(view: ToolView, args: Readonly<Record<string, unknown>>): CallDecision {
  const decision = decide(view, args);
  return view.shadowDecision ? { decision, shadow: view.shadowDecision } : { decision };
}
