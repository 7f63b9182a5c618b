// Pinned tool definitions (SPEC section 4.2), applied to the tool views: with
// pinning in force, a tool whose definition digest differs from its pin in
// toolhost.lock is excluded (`definition_changed`, both digests in details),
// and so is a tool with no pin (`not_pinned`), until `toolhost lock` runs
// again. `pinning: enforce` with no lock excludes every tool (an organisation
// that requires a lock gets none of the unpinned tools).
import type { Problem } from '../config/problem.js';
import type { ToolLock } from '../registry/lock-file.js';
import { LOCK_FILE_NAME } from '../registry/lock-file.js';
import type { MergedPolicy } from './policy-model.js';
import type { RuleRef, ToolView } from './types.js';

/** Whether pins are enforced, and the rule that says so. */
export interface PinningInForce {
  readonly enforced: boolean;
  /** `file:line pinning`, or `(built-in) pinning` (the default: enforce because a lock exists). */
  readonly rule: RuleRef;
  readonly lock: ToolLock | null;
}

/** Why a tool's pin refuses it. */
interface PinRefusal {
  readonly reason: 'definition_changed' | 'not_pinned';
  /** The pinned digest; null when the tool has no pin. */
  readonly pinned: string | null;
  readonly current: string;
}

/** Pinning in force for this policy and lock. */
export function pinningOf(policy: MergedPolicy, lock: ToolLock | null): PinningInForce {
  const setting = policy.pinning;
  const enforced = setting.value === 'enforce' || (setting.value === 'auto' && lock !== null);
  return { enforced, rule: setting.source.rule, lock };
}

/** The refusal of a tool's definition by its pin, or undefined when it is pinned as it is (or pins are off). */
export function checkPin(pinning: PinningInForce, name: string, digest: string): PinRefusal | undefined {
  if (!pinning.enforced) return undefined;
  const pin = pinning.lock?.entries.get(name);
  if (pin === undefined) return { reason: 'not_pinned', pinned: null, current: digest };
  return pin.digest === digest ? undefined : { reason: 'definition_changed', pinned: pin.digest, current: digest };
}

/** One sentence for people: what is wrong with the pin and what to do. */
function describePinRefusal(refusal: PinRefusal, lock: ToolLock | null): string {
  const file = lock?.display ?? LOCK_FILE_NAME;
  if (refusal.reason === 'definition_changed')
    return `its definition differs from its pin in ${file}; review the change (toolhost lock --check) and run toolhost lock to accept it`;
  return lock === null ? `pinning is enforced and there is no ${file}; run toolhost lock` : `it has no pin in ${file}; review it and run toolhost lock`;
}

/** The view with the pin's refusal as its exclusion (not listed, no RunSpec, every call policy_denied). */
export function excludeByPin(view: ToolView, pinning: PinningInForce, refusal: PinRefusal): { view: ToolView; problem: Problem } {
  const text = describePinRefusal(refusal, pinning.lock);
  const { runSpec: _dropped, ...rest } = view;
  const excluded: ToolView = Object.freeze({
    ...rest,
    listed: false,
    exclusion: Object.freeze({ rule: pinning.rule, reason: text, details: Object.freeze({ reason: refusal.reason, pinned: refusal.pinned, current: refusal.current }) }),
    decision: Object.freeze({ effect: 'deny' as const, code: 'policy_denied' as const, rule: pinning.rule, reason: `excluded: ${text}` }),
  });
  const subject = view.manifest.upstream ? `server tool "${view.manifest.name}"` : `tool "${view.manifest.name}"`;
  return { view: excluded, problem: view.manifest.source.problemAt(view.manifest.upstream ? ['name'] : ['name'], `${subject} excluded: ${text} (${pinning.rule})`) };
}
