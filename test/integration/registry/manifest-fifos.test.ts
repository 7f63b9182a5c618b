// Manifest folders holding FIFOs (mkfifo is a process, so these live here, not in
// the unit project): loadManifests must never block reading one.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../../src/registry/load-manifests.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';

const REPO = join(import.meta.dirname, '../../..');
const FIXTURES = 'test/fixtures/manifests';

describe('loadManifests refuses paths that escape through a symlink', () => {
  let folder: TempDir | undefined;
  let temp = '';
  afterEach(() => {
    folder?.remove();
    folder = undefined;
  });

  function makeToolFolder(): { dir: string } {
    folder = makeTempDir('toolhost-manifests-');
    temp = folder.path;
    const dir = join(temp, 'tool');
    mkdirSync(dir);
    return { dir };
  }

  it('reads nothing a reference names: a $ref to a FIFO (which would block any reader) is refused at once', () => {
    const { dir } = makeToolFolder();
    const fifo = join(dir, 'schema.json');
    execFileSync('mkfifo', [fifo]);
    cpSync(join(REPO, FIXTURES, 'good/defaults/tool.js'), join(dir, 'tool.js'));
    const yaml = `name: fifo_ref\ndescription: d\ntimeoutMs: 5\nsandbox:\n  mode: isolate\nentry: ./tool.js\ninput:\n  type: object\n  properties:\n    a: { $ref: "./schema.json" }\n    b: { $ref: "file://${fifo}" }\n`;
    writeFileSync(join(dir, 'tool.yaml'), yaml);
    const result = loadManifests({ dirs: [dir], workspace: temp, cwd: temp });
    expect(result.problems).toEqual([
      { file: 'tool/tool.yaml', line: 10, col: 16, reason: 'input schema: $ref "./schema.json" refers outside itself; only local "#..." references are allowed' },
      { file: 'tool/tool.yaml', line: 11, col: 16, reason: `input schema: $ref "file://${fifo}" refers outside itself; only local "#..." references are allowed` },
    ]);
  });

  it('skips a FIFO named like a manifest, and a link to one, instead of blocking on it', () => {
    const { dir } = makeToolFolder();
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    symlinkSync(join(dir, 'pipe.yaml'), join(dir, 'link.yml'));
    expect(loadManifests({ dirs: [dir], workspace: temp, cwd: temp })).toEqual({ manifests: [], servers: [], problems: [] });
  });
});
