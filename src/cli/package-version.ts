// The version in toolhost's own package.json, found by walking up from this
// module: src/cli (vitest) and dist/src/cli (built) sit at different depths.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** toolhost's package version, e.g. 0.1.0; 0.0.0 when the package.json cannot be found. */
export function packageVersion(): string {
  return findPackage()?.version ?? '0.0.0';
}

/** The folder of toolhost's package.json (the package root: bin/, schemas/, dist/). */
export function packageRoot(): string {
  const found = findPackage();
  if (found === undefined) throw new Error(`cannot find toolhost's package.json above ${fileURLToPath(import.meta.url)}`);
  return found.dir;
}

function findPackage(): { dir: string; version: string } | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const manifest: unknown = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (typeof manifest === 'object' && manifest !== null && (manifest as Record<string, unknown>)['name'] === 'toolhost') {
        const version = (manifest as Record<string, unknown>)['version'];
        return { dir, version: typeof version === 'string' ? version : '0.0.0' };
      }
    } catch {
      // not here: keep walking
    }
    dir = dirname(dir);
  }
  return undefined;
}
