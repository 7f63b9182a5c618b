// A real temporary folder for one test: symlink-resolved, because the sandboxes
// and the host compare resolved paths (/tmp may be a link), and removed whole.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  readonly path: string;
  remove(): void;
}

/** A fresh folder under the system temporary folder, named by `prefix`. */
export function makeTempDir(prefix: string): TempDir {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
