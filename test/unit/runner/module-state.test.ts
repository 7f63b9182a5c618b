// src/runner keeps no mutable state in its modules (STYLE section 2, issue 12):
// per-host state lives in the objects a host builds (ProcessServices: spawner,
// process groups, pids cgroups, SandboxFacts, prepared sandboxes, isolate
// processes), so two hosts in one process share nothing. This parses every
// source of src/runner with the TypeScript compiler and fails on a module-level
// `let`/`var`, a module-level `const` made with `new …` (a Map, a Set, a class
// instance: a cache or a default instance), or a mutable static class field,
// unless it is an immutable constant on the allowlist below.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const RUNNER_DIR = fileURLToPath(new URL('../../../src/runner', import.meta.url));

/**
 * Module-level constants made with `new` that hold no state, by `file:name`.
 * Keep it short; each says why it is immutable.
 */
const IMMUTABLE_CONSTANTS: ReadonlyMap<string, string> = new Map([
  // URLs of the code the sandboxes run, resolved against this module: never written to.
  ['process/spawner-client.ts:SPAWNER_URL', 'URL of src/runner/host-helpers/spawner.mjs'],
  ['worker/worker-pool.ts:WORKER_ENTRY_URL', 'URL of sandbox/worker/worker-entry.mjs'],
  ['isolate/isolate-sandbox.ts:SANDBOX_CODE_URL', 'URL of sandbox/, the code the isolate process runs'],
  ['isolate/isolate-sandbox.ts:ISOLATE_PROCESS_URL', 'URL of sandbox/isolate/isolate-process.mjs'],
  ['isolate/isolate-sandbox.ts:PRELUDE_URL', 'URL of sandbox/isolate/isolate-prelude.mjs'],
  // ReadonlySet tables of names, typed so that nothing can add to them.
  ['bwrap/egress-request-head.ts:HOP_HEADERS', 'ReadonlySet of hop-by-hop header names'],
  ['bwrap/argv.ts:ETC_ALLOWLIST_PATHS', 'ReadonlySet of the allowlisted /etc paths'],
  // A fatal, non-streaming decoder keeps nothing between decode() calls.
  ['process/output-cap.ts:STRICT_UTF8', 'TextDecoder used only without { stream: true }'],
]);

interface Finding {
  readonly at: string;
  readonly what: string;
}

/** Every module-level binding of `source` that can hold state, as `file:name` with what it is. */
function moduleState(file: string, source: string): Finding[] {
  const tree = parse(file, source);
  const findings: Finding[] = [];
  for (const statement of tree.statements) {
    if (ts.isVariableStatement(statement)) {
      const flags = statement.declarationList.flags;
      const isConst = (flags & ts.NodeFlags.Const) !== 0;
      for (const declaration of statement.declarationList.declarations) {
        const name = declaration.name.getText(tree);
        if (!isConst) {
          findings.push({ at: `${file}:${name}`, what: (flags & ts.NodeFlags.Let) !== 0 ? 'let' : 'var' });
          continue;
        }
        const made = declaration.initializer === undefined ? undefined : constructedClass(declaration.initializer);
        if (made !== undefined && !IMMUTABLE_CONSTANTS.has(`${file}:${name}`)) findings.push({ at: `${file}:${name}`, what: `const = new ${made}` });
      }
    }
    if (ts.isClassDeclaration(statement)) {
      for (const member of statement.members) {
        if (!ts.isPropertyDeclaration(member)) continue;
        const modifiers = ts.getModifiers(member) ?? [];
        if (!modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword)) continue;
        const isReadonly = modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.ReadonlyKeyword);
        const made = member.initializer === undefined ? undefined : constructedClass(member.initializer);
        if (!isReadonly || made !== undefined) {
          findings.push({ at: `${file}:${statement.name?.text ?? 'class'}.${member.name.getText(tree)}`, what: isReadonly ? `static = new ${made ?? ''}` : 'static field' });
        }
      }
    }
  }
  return findings;
}

/** The class a `new` expression makes (through `as`, `satisfies` and parentheses), else undefined. */
function constructedClass(expression: ts.Expression): string | undefined {
  let inner: ts.Expression = expression;
  while (ts.isAsExpression(inner) || ts.isSatisfiesExpression(inner) || ts.isParenthesizedExpression(inner)) inner = inner.expression;
  return ts.isNewExpression(inner) ? inner.expression.getText() : undefined;
}

function parse(file: string, source: string): ts.SourceFile {
  return ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

function runnerSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return runnerSources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('module state in src/runner', () => {
  it('finds what it must: let, var, caches and instances made at module level, mutable statics', () => {
    const source = [
      'let cached: string | undefined;',
      'var legacy = 1;',
      'const cache = new Map<string, number>();',
      'export const DEFAULT_GROUPS = new ProcessGroups() as ProcessGroups;',
      'const TABLE: readonly string[] = ["a"];',
      'class Registry { static instances = 0; static readonly NAME = "x"; static readonly all = new Set(); }',
      'function f() { let local = 1; const inner = new Map(); return [local, inner]; }',
    ].join('\n');
    expect(moduleState('sample.ts', source)).toEqual([
      { at: 'sample.ts:cached', what: 'let' },
      { at: 'sample.ts:legacy', what: 'var' },
      { at: 'sample.ts:cache', what: 'const = new Map' },
      { at: 'sample.ts:DEFAULT_GROUPS', what: 'const = new ProcessGroups' },
      { at: 'sample.ts:Registry.instances', what: 'static field' },
      { at: 'sample.ts:Registry.all', what: 'static = new Set' },
    ]);
  });

  it('has none: per-host state lives in the ProcessServices a host builds', () => {
    const files = runnerSources(RUNNER_DIR);
    expect(files.length).toBeGreaterThan(40);
    const findings = files.flatMap((path) => moduleState(relative(RUNNER_DIR, path), readFileSync(path, 'utf8')));
    expect(findings).toEqual([]);
  });

  it('allows only constants that still exist (a stale entry would hide a new binding of that name)', () => {
    const declared = new Set(
      runnerSources(RUNNER_DIR).flatMap((path) => {
        const file = relative(RUNNER_DIR, path);
        const tree = parse(file, readFileSync(path, 'utf8'));
        return tree.statements.filter(ts.isVariableStatement).flatMap((statement) => statement.declarationList.declarations.map((declaration) => `${file}:${declaration.name.getText(tree)}`));
      }),
    );
    expect([...IMMUTABLE_CONSTANTS.keys()].filter((key) => !declared.has(key))).toEqual([]);
  });
});
