// Exposure (SPEC section 4 and section 5 step 3): a tool the policy excluded
// (it conflicts with the policy as declared) or denied by name or class is
// refused here, naming the rule in details.rule and in the message.
import { HostError } from '../errors.js';
import { decideForPrincipal, type PrincipalRule } from '../policy/principals.js';
import type { ToolView } from '../policy/types.js';
import type { Redactor } from './redact.js';

/**
 * Throws `policy_denied` or `unclassified_tool` when the policy does not expose this tool.
 * The rule is shown as named (SPEC section 4); the reason may quote manifest
 * paths, so it is redacted like anything else the model sees.
 */
export function checkExposure(view: ToolView, redact: Redactor): void {
  const name = view.manifest.name;
  if (view.exclusion) {
    const { rule } = view.exclusion;
    const reason = redact(view.exclusion.reason);
    throw new HostError('policy_denied', `The tool ${name} is excluded by policy rule ${rule}: ${oneLine(reason)}`, { rule, reason });
  }
  const decision = view.decision;
  if (decision.effect === 'deny') {
    const { code, rule } = decision;
    const reason = redact(decision.reason);
    const what = code === 'unclassified_tool' ? 'is unclassified and refused' : 'is denied';
    throw new HostError(code, `The tool ${name} ${what} by policy rule ${rule}: ${oneLine(reason)}`, { rule, reason });
  }
}

/** Throws `policy_denied` when a `principals:` rule keeps this caller from this tool (SPEC section 6.1). */
export function checkPrincipal(view: ToolView, principal: string | null, rules: readonly PrincipalRule[]): void {
  const decision = decideForPrincipal(rules, view.manifest.name, principal);
  if (decision.effect !== 'deny') return;
  const { rule, reason } = decision;
  throw new HostError('policy_denied', `The tool ${view.manifest.name} is denied by policy rule ${rule}: ${oneLine(reason)}`, { rule, reason, principal });
}

// Messages are one sentence: reasons written for people may span lines.
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim().replace(/\.$/, '');
  return `${flat}.`;
}
