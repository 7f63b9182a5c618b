// The project's own sources and what each imports, read as text: for tests that
// hold the code to its architecture (folder dependencies, what loads when).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT } from './mcp-clients.js';

export interface SourceFile {
  /** Relative to the repository root, with forward slashes (`src/policy/views.ts`). */
  readonly file: string;
  readonly text: string;
}

export interface SourceImport {
  /** As written (`../runner/types.js`, `node:fs`, `@opentelemetry/api`). */
  readonly specifier: string;
  /** `import type`, `export type`, an inline `import('…')` type or a JSDoc `@typedef {import('…')}`: erased at runtime. */
  readonly typeOnly: boolean;
  /** A runtime `await import('…')`. */
  readonly dynamic: boolean;
  /** For a relative specifier: the file it names, relative to the repository root, `.js` read as `.ts` under src/. */
  readonly target?: string;
}

/** Every file under `dir` (relative to the repository root) whose name ends with one of `endings`. */
export function sourceFiles(dir: string, endings: readonly string[] = ['.ts']): SourceFile[] {
  return readdirSync(join(REPO_ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && endings.some((ending) => entry.name.endsWith(ending)))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
    .map((path) => ({ file: relative(REPO_ROOT, path).split('\\').join('/'), text: readFileSync(path, 'utf8') }));
}

// `import … from 'x'` / `export … from 'x'` (the `type` keyword right after, if any), then `import('x')` anywhere.
const FROM_IMPORT = /^\s*(?:import|export)\s+(type\s)?[^;]*?\bfrom\s+['"]([^'"]+)['"]/gm;
const SIDE_EFFECT_IMPORT = /^\s*import\s+['"]([^'"]+)['"]/gm;
const CALL_IMPORT = /(await\s+)?\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** What `source` imports: static imports, re-exports, inline and JSDoc type imports, dynamic imports. */
export function importsOf(source: SourceFile): SourceImport[] {
  const found: Array<Omit<SourceImport, 'target'>> = [
    ...[...source.text.matchAll(FROM_IMPORT)].map((match) => ({ specifier: match[2]!, typeOnly: match[1] !== undefined, dynamic: false })),
    ...[...source.text.matchAll(SIDE_EFFECT_IMPORT)].map((match) => ({ specifier: match[1]!, typeOnly: false, dynamic: false })),
    // Without `await` an `import('x')` is a type position (TypeScript) or a JSDoc typedef (.mjs).
    ...[...source.text.matchAll(CALL_IMPORT)].map((match) => ({ specifier: match[2]!, typeOnly: match[1] === undefined, dynamic: match[1] !== undefined })),
  ];
  return found.map((entry) => {
    if (!entry.specifier.startsWith('.')) return entry;
    const target = relative(REPO_ROOT, resolve(REPO_ROOT, dirname(source.file), entry.specifier))
      .split('\\')
      .join('/');
    return { ...entry, target: target.startsWith('src/') ? target.replace(/\.js$/, '.ts') : target };
  });
}
