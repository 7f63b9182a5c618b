// Rules on arguments for one call (SPEC section 4.1): which rules apply to a
// tool is settled once per tool view (tool globs and class); per call only the
// principal globs are matched and the `when` conditions evaluated, in layer
// order. A deny stops at once (it is the strictest effect, and the first in
// layer order); an ask is kept while later rules may still deny. A condition
// that cannot be evaluated (a missing argument, a type error, the cost limit,
// a helper that cannot judge its input) denies, naming the rule.
import { matchGlob } from '../globs.js';
import type { SideEffect } from '../../registry/manifest.js';
import { PathHelpers, RuleTool, URL_HELPERS, type RuleActivation } from './cel-env.js';
import type { CompiledRule } from './compile-rules.js';
import type { PathBase } from './path-helpers.js';
import { estimateCost, largestCollection, RULE_COST_LIMIT } from './rule-cost.js';

/** The rules of one tool and what their conditions see of it; absent on a view when no rule applies. */
export interface RuleScope {
  /** Enforced rules whose tools and class match, in layer order. */
  readonly rules: readonly CompiledRule[];
  /** Rules of shadow-mode organisation files that match: what they would deny is reported, not enforced. */
  readonly shadowRules: readonly CompiledRule[];
  readonly tool: RuleTool;
  readonly path: PathHelpers;
  readonly workspace: string;
}

/** Why a rule could not be evaluated for a call. */
type RuleFailure = 'missing_argument' | 'type_error' | 'cost_limit' | 'not_a_condition' | 'helper_refused' | 'evaluation_error';

/** What the rules decide for one call. */
type RuleVerdict = { readonly effect: 'allow' } | RuleRefusal;

/** A rule that denies the call or makes it ask; `failure` when its condition could not be evaluated. */
interface RuleRefusal {
  readonly effect: 'deny' | 'ask';
  readonly rule: CompiledRule;
  readonly failure?: RuleFailure;
  readonly detail?: string;
}

/** One rule's result, for `explain`. */
interface RuleTrace {
  readonly rule: CompiledRule;
  /** False when its principals globs leave this caller out. */
  readonly applies: boolean;
  /** The condition's value; null when it could not be evaluated (or does not apply). */
  readonly matched: boolean | null;
  readonly failure?: RuleFailure;
  readonly detail?: string;
}

/** The scope of a tool, or undefined when no rule (enforced or shadow) names it. */
export function scopeRules(
  rules: readonly CompiledRule[],
  tool: { readonly name: string; readonly sideEffect?: SideEffect; readonly server?: string },
  base: PathBase,
): RuleScope | undefined {
  const applying = rules.filter(
    (rule) => rule.tools.some((glob) => matchGlob(glob, tool.name)) && (rule.classes === undefined || (tool.sideEffect !== undefined && rule.classes.includes(tool.sideEffect))),
  );
  if (applying.length === 0) return undefined;
  return Object.freeze({
    rules: Object.freeze(applying.filter((rule) => !rule.shadow)),
    shadowRules: Object.freeze(applying.filter((rule) => rule.shadow)),
    tool: new RuleTool(tool.name, tool.sideEffect ?? 'unclassified', tool.server ?? ''),
    path: new PathHelpers(base),
    workspace: base.workspace,
  });
}

/** The enforced rules' verdict for a call (first deny in layer order, else first ask, else allow). */
export function evaluateRules(scope: RuleScope, args: Readonly<Record<string, unknown>>, principal: string | null): RuleVerdict {
  return decideOver(scope.rules, scope, args, principal);
}

/** What the shadow rules would decide for a call (reported as would_deny, never enforced). */
export function evaluateShadowRules(scope: RuleScope, args: Readonly<Record<string, unknown>>, principal: string | null): RuleVerdict {
  return scope.shadowRules.length === 0 ? ALLOW : decideOver(scope.shadowRules, scope, args, principal);
}

/** Every rule of the scope with its result, for `explain` (enforced first, then shadow). */
export function traceRules(scope: RuleScope, args: Readonly<Record<string, unknown>>, principal: string | null): RuleTrace[] {
  const activation = activationFor(scope, args, principal);
  let largest: number | undefined;
  return [...scope.rules, ...scope.shadowRules].map((rule) => {
    if (!appliesTo(rule, principal)) return { rule, applies: false, matched: null };
    largest ??= largestCollection(args, true);
    const result = runRule(rule, activation, largest);
    return result.ok ? { rule, applies: true, matched: result.matched } : { rule, applies: true, matched: null, failure: result.failure, detail: result.detail };
  });
}

const ALLOW: RuleVerdict = Object.freeze({ effect: 'allow' });

function decideOver(rules: readonly CompiledRule[], scope: RuleScope, args: Readonly<Record<string, unknown>>, principal: string | null): RuleVerdict {
  let activation: RuleActivation | undefined;
  let largest: number | undefined;
  let ask: CompiledRule | undefined;
  for (const rule of rules) {
    if (!appliesTo(rule, principal)) continue;
    // An ask is already decided for a later ask rule: only a deny could change the outcome.
    if (ask !== undefined && rule.effect === 'ask') continue;
    activation ??= activationFor(scope, args, principal);
    if (rule.shape.depth > 0) largest ??= largestCollection(args, rule.shape.splits);
    const result = runRule(rule, activation, largest ?? 1);
    if (!result.ok) return { effect: 'deny', rule, failure: result.failure, detail: result.detail };
    if (!result.matched) continue;
    if (rule.effect === 'deny') return { effect: 'deny', rule };
    ask = rule;
  }
  return ask === undefined ? ALLOW : { effect: 'ask', rule: ask };
}

function appliesTo(rule: CompiledRule, principal: string | null): boolean {
  if (rule.principals === undefined) return true;
  return principal !== null && rule.principals.some((glob) => matchGlob(glob, principal));
}

function activationFor(scope: RuleScope, args: Readonly<Record<string, unknown>>, principal: string | null): RuleActivation {
  return { args, tool: scope.tool, principal: principal ?? '', workspace: scope.workspace, path: scope.path.forCall(), url: URL_HELPERS };
}

type RuleRun = { ok: true; matched: boolean } | { ok: false; failure: RuleFailure; detail: string };

function runRule(rule: CompiledRule, activation: RuleActivation, largest: number): RuleRun {
  const cost = estimateCost(rule.shape, largest);
  if (cost > RULE_COST_LIMIT) return { ok: false, failure: 'cost_limit', detail: `estimated ${cost} steps, over the limit of ${RULE_COST_LIMIT}` };
  let value: unknown;
  try {
    value = rule.evaluate(activation);
  } catch (error) {
    return { ok: false, ...failureOf(error) };
  }
  if (value === true || value === false) return { ok: true, matched: value };
  // A promise (no helper is asynchronous) or any other value is not a decision.
  return { ok: false, failure: 'not_a_condition', detail: 'the condition did not evaluate to true or false' };
}

function failureOf(error: unknown): { failure: RuleFailure; detail: string } {
  const name = (error as { name?: unknown })?.name;
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? '').slice(0, 200) : String(error).slice(0, 200);
  if (name === 'PathHelperError' || name === 'UrlHelperError') return { failure: 'helper_refused', detail: message };
  if (code === 'no_such_key' || code === 'index_out_of_bounds') return { failure: 'missing_argument', detail: message };
  if (typeof code === 'string' && /overload|type/.test(code)) return { failure: 'type_error', detail: message };
  // A helper's own error may arrive wrapped by the evaluator: its cause says which.
  const cause = (error as { cause?: unknown })?.cause;
  if (cause !== undefined && cause !== error) {
    const inner = (cause as { name?: unknown }).name;
    if (inner === 'PathHelperError' || inner === 'UrlHelperError') return { failure: 'helper_refused', detail: (cause as Error).message.slice(0, 200) };
  }
  return { failure: 'evaluation_error', detail: message };
}
