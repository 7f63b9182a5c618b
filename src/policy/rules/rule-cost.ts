// The cost limit of rule evaluation. CEL has no loops, so a condition without
// comprehensions (all, exists, exists_one, map, filter) costs at most its own
// size, bounded at load by the parse limits. A comprehension runs its body once
// per element of a list a caller sends, and nested ones multiply: the worst
// case of a call is estimated before evaluation as size × (largest list or map
// in the arguments) ^ nesting, and a call over RULE_COST_LIMIT steps is not
// evaluated at all: the rule fails closed (cost_limit), the host's event loop
// is never held by a hostile argument.
import type { ASTNode } from '@marcbachmann/cel-js';

/** Estimated evaluation steps above which a rule is not evaluated for a call (it denies). */
export const RULE_COST_LIMIT = 100_000;

/** What the cost limit needs to know of an expression, found once at load. */
export interface ExpressionShape {
  /** AST nodes. */
  readonly nodes: number;
  /** Deepest nesting of comprehensions (0: none). */
  readonly depth: number;
  /** True when the expression splits strings: a list can then be as long as a string argument. */
  readonly splits: boolean;
  /** Offset of a `matches` call, when there is one (refused at load). */
  readonly regexAt?: number;
}

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

/** Walks a parsed expression once. */
export function estimateShape(ast: ASTNode): ExpressionShape {
  let nodes = 0;
  let depth = 0;
  let splits = false;
  let regexAt: number | undefined;
  const visit = (value: unknown, level: number): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, level);
      return;
    }
    if (!isNode(value)) return;
    nodes++;
    depth = Math.max(depth, level);
    if (value.op === 'rcall' || value.op === 'call') {
      const [name, ...rest] = value.args as unknown[];
      if (name === 'matches') regexAt ??= value.start;
      if (name === 'split') splits = true;
      if (value.op === 'rcall' && typeof name === 'string' && COMPREHENSIONS.has(name)) {
        // The receiver is evaluated once; the macro's arguments once per element.
        visit(rest[0], level);
        visit(rest[1], level + 1);
        return;
      }
      visit(rest, level);
      return;
    }
    visit(value.args, level);
  };
  visit(ast, 0);
  return { nodes, depth, splits, ...(regexAt !== undefined ? { regexAt } : {}) };
}

/**
 * The largest collection a comprehension could range over for these arguments: the
 * longest list or largest map anywhere in them (and, for an expression that splits
 * strings, the longest string). Walks the arguments once, without recursion.
 */
export function largestCollection(args: unknown, countStrings: boolean): number {
  let largest = 1;
  const pending: unknown[] = [args];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (countStrings && value.length > largest) largest = value.length;
    } else if (Array.isArray(value)) {
      if (value.length > largest) largest = value.length;
      for (const item of value) pending.push(item);
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.values(value);
      if (entries.length > largest) largest = entries.length;
      for (const item of entries) pending.push(item);
    }
  }
  return largest;
}

/** The estimated worst-case steps of an expression for arguments whose largest collection is `largest`. */
export function estimateCost(shape: ExpressionShape, largest: number): number {
  return shape.depth === 0 ? shape.nodes : shape.nodes * largest ** shape.depth;
}

function isNode(value: unknown): value is ASTNode {
  return typeof value === 'object' && value !== null && 'op' in value && 'args' in value;
}
