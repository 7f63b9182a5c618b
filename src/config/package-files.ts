// Files that ship with the package (schemas/), found by walking up from this
// module to the package root, so the same code works from src/ (tests) and
// from dist/src/ (the built CLI).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of schemas/<name> in this package. */
export function schemaPath(name: string): string {
  const relative = join('schemas', name);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, relative);
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${relative} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
