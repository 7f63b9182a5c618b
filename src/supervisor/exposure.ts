// Exposure (SPEC section 4 and section 5 step 3): a tool the policy excluded
// (it conflicts with the policy as declared) or denied by name or class is
// refused here, naming the rule in details.rule and in the message.
import { HostError } from '../errors.js';
import type { ToolView } from '../policy/types.js';

/** Throws `policy_denied` or `unclassified_tool` when the policy does not expose this tool. */
export function checkExposure(view: ToolView): void {
  const name = view.manifest.name;
  if (view.exclusion) {
    const { rule, reason } = view.exclusion;
    throw new HostError('policy_denied', `The tool ${name} is excluded by policy rule ${rule}: ${oneLine(reason)}`, { rule, reason });
  }
  const decision = view.decision;
  if (decision.effect === 'deny') {
    const { code, rule, reason } = decision;
    const what = code === 'unclassified_tool' ? 'is unclassified and refused' : 'is denied';
    throw new HostError(code, `The tool ${name} ${what} by policy rule ${rule}: ${oneLine(reason)}`, { rule, reason });
  }
}

// Messages are one sentence: reasons written for people may span lines.
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim().replace(/\.$/, '');
  return `${flat}.`;
}
