// Every export of src/ is imported somewhere else (src/, test/, scripts/, bin/,
// sandbox/): an export nobody imports is dead code or a name that should be
// private. Parse-only (no type checker), so it stays fast; a module imported
// with `import * as`, `export *` or a dynamic import() other than
// `const { a, b } = await import('…')` counts as wholly used.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');

/** Exports nobody imports by name, kept on purpose: a pattern over `file:name` (relative to src/), each with why. */
const KEPT: ReadonlyMap<RegExp, string> = new Map([[/^cli\/[a-z-]+\.ts:run$/, 'a command module: cli/commands.ts imports it by its name and calls its run']]);

const SOURCE = /\.(ts|mts|mjs|js)$/;

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => SOURCE.test(name) && !name.endsWith('.d.ts') && !name.split('/').includes('node_modules') && !name.split('/').includes('fixtures'))
    .map((name) => join(ROOT, dir, name));
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true, file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
}

/** The src/ module a specifier names (dist/src/x.js and src/x.js both mean src/x.ts), else undefined. */
function srcModule(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  let target = resolve(dirname(fromFile), specifier);
  const dist = join(ROOT, 'dist') + '/';
  if (target.startsWith(dist)) target = join(ROOT, target.slice(dist.length));
  if (!target.startsWith(SRC + '/')) return undefined;
  return target.replace(/\.js$/, '.ts');
}

/** The names each src/ module exports, as `file:name` keys. */
function exportsOf(tree: ts.SourceFile, file: string): string[] {
  const key = (name: string) => `${relative(SRC, file)}:${name}`;
  const names: string[] = [];
  for (const statement of tree.statements) {
    const modifiers = ts.canHaveModifiers(statement) ? (ts.getModifiers(statement) ?? []) : [];
    const exported = modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
    const isDefault = modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.DefaultKeyword);
    if (exported && !isDefault) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) names.push(key(declaration.name.text));
      } else if (
        (ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement) ||
          ts.isInterfaceDeclaration(statement) ||
          ts.isTypeAliasDeclaration(statement) ||
          ts.isEnumDeclaration(statement)) &&
        statement.name
      ) {
        names.push(key(statement.name.text));
      }
    }
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier === undefined && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) names.push(key(element.name.text));
    }
  }
  return names;
}

/** What `tree` imports from src/: `file:name` keys, and modules it uses whole. */
function importsOf(tree: ts.SourceFile, file: string): { names: string[]; whole: string[] } {
  const names: string[] = [];
  const whole: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const module = srcModule(file, node.moduleSpecifier.text);
      if (module !== undefined) {
        const at = (name: string) => `${relative(SRC, module)}:${name}`;
        if (ts.isImportDeclaration(node)) {
          const bindings = node.importClause?.namedBindings;
          if (bindings && ts.isNamespaceImport(bindings)) whole.push(relative(SRC, module));
          else if (bindings) for (const element of bindings.elements) names.push(at((element.propertyName ?? element.name).text));
        } else if (node.exportClause && ts.isNamedExports(node.exportClause)) {
          for (const element of node.exportClause.elements) names.push(at((element.propertyName ?? element.name).text));
        } else whole.push(relative(SRC, module));
      }
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      const module = srcModule(file, node.arguments[0].text);
      const declaration = ts.isAwaitExpression(node.parent) ? node.parent.parent : undefined;
      if (module !== undefined && declaration && ts.isVariableDeclaration(declaration) && ts.isObjectBindingPattern(declaration.name)) {
        for (const element of declaration.name.elements) names.push(`${relative(SRC, module)}:${(element.propertyName ?? element.name).getText(tree)}`);
      } else if (module !== undefined) whole.push(relative(SRC, module));
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const module = srcModule(file, node.argument.literal.text);
      if (module !== undefined) {
        if (node.qualifier) names.push(`${relative(SRC, module)}:${ts.isIdentifier(node.qualifier) ? node.qualifier.text : node.qualifier.left.getText(tree)}`);
        else whole.push(relative(SRC, module));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return { names, whole };
}

function unusedExports(): string[] {
  const exported = new Set<string>();
  const used = new Set<string>();
  const usedWhole = new Set<string>();
  for (const file of ['src', 'test', 'scripts', 'bin', 'sandbox'].flatMap(filesUnder)) {
    const tree = parse(file);
    if (file.startsWith(SRC + '/') && file.endsWith('.ts')) for (const name of exportsOf(tree, file)) exported.add(name);
    const { names, whole } = importsOf(tree, file);
    for (const name of names) used.add(name);
    for (const module of whole) usedWhole.add(module);
  }
  return [...exported].filter((name) => !used.has(name) && !usedWhole.has(name.slice(0, name.lastIndexOf(':')))).sort();
}

describe('exports of src/', () => {
  const unused = unusedExports().filter((name) => ![...KEPT.keys()].some((pattern) => pattern.test(name)));

  it('are imported somewhere, or kept with a reason', () => {
    expect(unused, 'exported and imported nowhere: make it private, delete it, or keep it in KEPT with why').toEqual([]);
  });

  it('counts no export imported by name, and no command module loaded by its name', () => {
    expect(unused).not.toContain('log.ts:createSilentLogger');
    expect(unused.some((name) => name.startsWith('cli/call.ts:run'))).toBe(false);
  });
});
