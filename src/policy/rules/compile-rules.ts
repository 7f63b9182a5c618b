// The `rules:` of every policy layer (SPEC section 4.1), compiled once at
// load. An expression that does not parse, names an unknown variable or
// function, or is not a condition is a problem at its file:line:col (so
// `validate` refuses it and `serve` does not start); `matches` is refused:
// its JavaScript regular expressions backtrack, and a hostile argument could
// hold the host's event loop for seconds.
import { readFileSync } from 'node:fs';
import type { ParseResult } from '@marcbachmann/cel-js';
import type { Problem } from '../../config/problem.js';
import type { SideEffect } from '../../registry/manifest.js';
import { sourceAt } from '../merge.js';
import type { ClassFilter, PolicyFile } from '../policy-model.js';
import type { RuleRef } from '../types.js';
import { ruleEnvironment } from './cel-env.js';
import { estimateShape, type ExpressionShape } from './rule-cost.js';

/** One rule, ready to evaluate. */
export interface CompiledRule {
  readonly name: string;
  /** `file:line rules.NAME`: the rule as errors, `explain` and the journal name it. */
  readonly ref: RuleRef;
  readonly file: string;
  readonly line: number;
  readonly layer: PolicyFile['layer'];
  /** From an organisation file in mode: shadow: reported (would_deny), never enforced. */
  readonly shadow: boolean;
  readonly tools: readonly string[];
  /** Absent: every caller; present: only HTTP principals matching one of these. */
  readonly principals?: readonly string[];
  /** Absent: every class. */
  readonly classes?: readonly SideEffect[];
  readonly effect: 'deny' | 'ask';
  readonly when: string;
  readonly evaluate: ParseResult;
  /** Size and comprehension nesting, for the cost limit. */
  readonly shape: ExpressionShape;
}

interface CompiledRules {
  /** Every rule of every layer, in layer order (organisation files first, then the repository's). */
  readonly rules: readonly CompiledRule[];
  readonly problems: readonly Problem[];
}

/** Compiles the rules of every file; a rule with a problem is left out (and the problem stops the host). */
export function compileRules(files: readonly PolicyFile[]): CompiledRules {
  const rules: CompiledRule[] = [];
  const problems: Problem[] = [];
  for (const file of files) {
    const written = file.data.rules ?? [];
    const seen = new Set<string>();
    written.forEach((rule, index) => {
      const at = ['rules', index] as const;
      if (seen.has(rule.name)) {
        problems.push(file.source.problemAt([...at, 'name'], `rules: the name "${rule.name}" is used twice in this file`));
        return;
      }
      seen.add(rule.name);
      const compiled = compileExpression(rule.when);
      if (!compiled.ok) {
        const position = expressionPosition(file, [...at, 'when'], compiled.offset);
        problems.push({ file: file.file, line: position.line, col: position.col, reason: `rules.${rule.name}.when: ${compiled.reason}` });
        return;
      }
      const source = sourceAt(file, [...at], 'rules');
      rules.push(
        Object.freeze({
          name: rule.name,
          ref: `${file.file}:${source.line ?? 1} rules.${rule.name}`,
          file: file.file,
          line: source.line ?? 1,
          layer: file.layer,
          shadow: file.mode === 'shadow',
          tools: Object.freeze([...rule.tools]),
          ...(rule.principals ? { principals: Object.freeze([...rule.principals]) } : {}),
          ...(rule.class !== undefined ? { classes: classList(rule.class) } : {}),
          effect: rule.effect,
          when: rule.when,
          evaluate: compiled.evaluate,
          shape: compiled.shape,
        }),
      );
    });
  }
  return { rules: Object.freeze(rules), problems };
}

/** The classes a filter names. */
export function classList(filter: ClassFilter): readonly SideEffect[] {
  return Object.freeze(typeof filter === 'string' ? [filter] : [...filter]);
}

type Compiled = { ok: true; evaluate: ParseResult; shape: ExpressionShape } | { ok: false; reason: string; offset: number };

/** Parses and type-checks one `when`. */
export function compileExpression(when: string): Compiled {
  let parsed: ParseResult;
  try {
    parsed = ruleEnvironment().parse(when);
  } catch (error) {
    return { ok: false, reason: celMessage(error), offset: celOffset(error) };
  }
  const checked = parsed.check();
  if (!checked.valid) return { ok: false, reason: celMessage(checked.error), offset: celOffset(checked.error) };
  if (checked.type !== 'bool' && checked.type !== 'dyn') return { ok: false, reason: `the condition must be true or false, not ${checked.type}`, offset: 0 };
  const shape = estimateShape(parsed.ast);
  if (shape.regexAt !== undefined) {
    return {
      ok: false,
      reason:
        'matches() is not available in rules (JavaScript regular expressions can take seconds on a hostile argument); use startsWith, endsWith, contains or the path and url helpers',
      offset: shape.regexAt,
    };
  }
  return { ok: true, evaluate: parsed, shape };
}

// The first line of the library's message (the rest is its own caret drawing).
function celMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).trim() || 'does not compile';
}

function celOffset(error: unknown): number {
  const range = (error as { range?: { start?: unknown } } | undefined)?.range;
  return typeof range?.start === 'number' ? range.start : 0;
}

/**
 * Where offset `offset` of the `when` text sits in the file: after the opening quote of
 * a quoted scalar, on its line of a block scalar (`|`, `>`), else from the value's start.
 * Escapes in a quoted scalar can shift the column by a few characters; the line is exact.
 */
function expressionPosition(file: PolicyFile, path: readonly (string | number)[], offset: number): { line: number; col: number } {
  const start = file.source.positionOf(path);
  let lines: string[];
  try {
    lines = readFileSync(file.path, 'utf8').split('\n');
  } catch {
    return start;
  }
  const first = lines[start.line - 1] ?? '';
  const marker = first[start.col - 1];
  if (marker === '|' || marker === '>') {
    const text = (file.data.rules?.[path[1] as number]?.when ?? '').slice(0, offset);
    const lineIndex = text.split('\n').length - 1;
    const column = text.length - (text.lastIndexOf('\n') + 1);
    // The block's indentation is set by its first content line; the value holds what lies past it.
    const firstContent = lines[start.line] ?? '';
    const indent = firstContent.length - firstContent.trimStart().length;
    return { line: start.line + 1 + lineIndex, col: indent + column + 1 };
  }
  const quoted = marker === '"' || marker === "'" ? 1 : 0;
  return { line: start.line, col: start.col + quoted + offset };
}
