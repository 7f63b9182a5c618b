// Where toolhost.yaml is, without reading it: the nearest one at or above the
// working directory. A leaf module (no YAML, no JSON Schema): `serve` looks
// before anything else loads, to know whether the file could make it an HTTP
// server (serve.ts); config-file.ts reads and checks what is found.
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The file name looked for in the working directory and its parents. */
const CONFIG_FILE_NAME = 'toolhost.yaml';

/** A toolhost.yaml larger than this is refused unread: it is a short settings file. */
export const MAX_CONFIG_BYTES = 256 * 1024;

/** The nearest toolhost.yaml at or above `cwd`, or undefined. */
export function findToolhostFile(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, CONFIG_FILE_NAME);
    if (isFile(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
