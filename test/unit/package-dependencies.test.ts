// Every package the shipped code imports at run time is a runtime dependency:
// one found only under devDependencies is missing from an install without dev
// dependencies (`npm install --omit=dev`, a packaged host), and the host would
// fail to start. Type-only imports are erased by tsc and do not count.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHIPPED = ['src', 'sandbox', 'bin'];
// `import x from 'p'`, `export … from 'p'`, `import 'p'`, `import('p')`; not `import type`.
const SPECIFIER = /(?:^|\n)\s*(?:import(?!\s+type\b)[^'"\n;]*?from\s*|export(?!\s+type\b)[^'"\n;]*?from\s*|import\s*\(?\s*)['"]([^'"]+)['"]/g;

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name) && !/\.d\.m?ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
  return builtinModules.includes(name) ? undefined : name;
}

describe('runtime dependencies', () => {
  it('lists every package that src/, sandbox/ and bin/ import at run time under dependencies', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const imported = new Map<string, string>();
    for (const file of SHIPPED.flatMap(filesUnder)) {
      for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
        const name = packageOf(match[1] ?? '');
        if (name !== undefined && !imported.has(name)) imported.set(name, file.slice(ROOT.length));
      }
    }
    expect(imported.size).toBeGreaterThan(5); // the scan finds the imports at all
    const missing = [...imported].filter(([name]) => manifest.dependencies[name] === undefined).map(([name, file]) => `${name} (imported by ${file})`);
    expect(missing).toEqual([]);
  });
});
