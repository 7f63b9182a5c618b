// Per-principal tool rules (SPEC sections 4 and 6.1): `principals: {glob:
// {tools: {allow, deny}}}`. Every entry of every layer whose glob matches the
// caller applies; an entry can only take tools away, so layering stays
// tighten-only without a merge rule of its own. Stdio calls have no principal
// and meet none of these rules.
import { findMatch, matchGlob } from './globs.js';
import { sourceAt } from './merge.js';
import type { PolicyFile, Source, Sourced } from './policy-model.js';
import type { Decision } from './types.js';

/** One `principals.<glob>` entry of one policy file. */
export interface PrincipalRule {
  /** Glob over principal names. */
  readonly glob: string;
  readonly source: Source;
  /** Absent: this entry lets through whatever the rest of the policy allows. */
  readonly allow?: { readonly source: Source; readonly items: readonly Sourced<string>[] };
  readonly deny: readonly Sourced<string>[];
}

/** Every `principals` entry of every enforced layer, most authoritative first. */
export function readPrincipalRules(files: readonly PolicyFile[]): readonly PrincipalRule[] {
  const rules: PrincipalRule[] = [];
  for (const file of files) {
    if (file.mode === 'shadow') continue;
    for (const [glob, entry] of Object.entries(file.data.principals ?? {})) {
      const base = ['principals', glob, 'tools'];
      const allow = entry.tools?.allow;
      rules.push({
        glob,
        source: sourceAt(file, ['principals', glob], 'principals', 'key'),
        ...(allow
          ? {
              allow: {
                source: sourceAt(file, [...base, 'allow'], 'principals', 'key'),
                items: allow.map((value, index) => ({ value, source: sourceAt(file, [...base, 'allow', index], 'principals') })),
              },
            }
          : {}),
        deny: (entry.tools?.deny ?? []).map((value, index) => ({ value, source: sourceAt(file, [...base, 'deny', index], 'principals') })),
      });
    }
  }
  return Object.freeze(rules);
}

/** Whether `principal` may call `tool` under these rules; null (stdio) is never restricted here. */
export function decideForPrincipal(rules: readonly PrincipalRule[], tool: string, principal: string | null): Decision {
  if (principal === null) return { effect: 'allow' };
  for (const rule of rules) {
    if (!matchGlob(rule.glob, principal)) continue;
    const denied = findMatch(rule.deny, tool);
    if (denied) {
      return {
        effect: 'deny',
        code: 'policy_denied',
        rule: `${denied.source.rule}.${rule.glob}.tools.deny`,
        reason: `principal ${principal} may not call tools matching ${denied.value}`,
      };
    }
    if (rule.allow && !findMatch(rule.allow.items, tool)) {
      return {
        effect: 'deny',
        code: 'policy_denied',
        rule: `${rule.allow.source.rule}.${rule.glob}.tools.allow`,
        reason: `principal ${principal} may call only tools matching ${rule.allow.items.map((item) => item.value).join(', ') || 'nothing'}`,
      };
    }
  }
  return { effect: 'allow' };
}
