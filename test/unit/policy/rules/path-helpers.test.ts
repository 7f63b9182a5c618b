// path.within and path.under with hostile paths: traversal, absolute paths,
// symbolic links inside and out of the workspace, `..` after a link, loops,
// NUL bytes and lengths past PATH_MAX. Every case runs on a real folder tree.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPathUnder, isPathWithin, resolveToolPath, PathHelperError, type PathBase } from '../../../../src/policy/rules/path-helpers.js';

let top: string;
let ws: string;
let base: PathBase;

beforeAll(() => {
  top = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-path-helpers-')));
  ws = join(top, 'ws');
  for (const dir of ['docs/sub', '.github/workflows', '.git', 'src', 'elsewhere']) mkdirSync(join(ws, dir), { recursive: true });
  mkdirSync(join(top, 'outside'), { recursive: true });
  writeFileSync(join(ws, 'docs/readme.md'), 'x');
  writeFileSync(join(ws, '.git/config'), 'x');
  // Links a hostile workspace could hold: into protected folders, out of the workspace, loops.
  symlinkSync('../.github/workflows', join(ws, 'docs/wf'));
  symlinkSync(join(top, 'outside'), join(ws, 'docs/out'));
  symlinkSync('docs', join(ws, 'docs-link'));
  symlinkSync('loop-b', join(ws, 'loop-a'));
  symlinkSync('loop-a', join(ws, 'loop-b'));
  // `docs/deep/..` is docs/ to a tool that normalises, .github/ to the kernel (deep → .github/workflows).
  symlinkSync('../.github/workflows', join(ws, 'docs/deep'));
  base = { root: ws, workspace: ws };
});

afterAll(() => rmSync(top, { recursive: true, force: true }));

describe('path.within', () => {
  it.each([
    ['docs/readme.md', ['docs/**'], true],
    ['./docs/readme.md', ['docs/**'], true],
    ['docs/new/file.md', ['docs/**'], true],
    ['docs', ['docs/**'], true],
    ['docs/../.git/config', ['docs/**'], false],
    ['docs/../.git/config', ['.git/**'], true],
    ['docs/./../../ws/.git/config', ['.git/**'], true],
    ['src/../../ws/.github/workflows/ci.yml', ['.github/**'], true],
    ['docs/wf/ci.yml', ['docs/**'], false],
    ['docs/wf/ci.yml', ['.github/**'], true],
    ['docs-link/readme.md', ['docs/**'], true],
    ['docs/out/secret', ['docs/**'], false],
    ['/etc/passwd', ['docs/**'], false],
    ['/etc/passwd', ['/etc/**'], true],
    ['../outside/x', ['**'], false],
    ['docs/readme.md', ['src/**', 'docs/*.md'], true],
    ['docs/sub/readme.md', ['docs/*.md'], false],
  ] as const)('%s within %j → %s', (p, globs, expected) => {
    expect(isPathWithin(p, globs, base)).toBe(expected);
  });

  it('an absolute path inside the workspace is judged like the relative one', () => {
    expect(isPathWithin(join(ws, '.github/workflows/ci.yml'), ['.github/**'], base)).toBe(true);
    expect(isPathWithin(join(ws, 'docs/wf/ci.yml'), ['docs/**'], base)).toBe(false);
  });

  it('relative paths start at the tool first root, globs stay relative to the workspace', () => {
    const docsTool = { root: join(ws, 'docs'), workspace: ws };
    expect(isPathWithin('readme.md', ['docs/**'], docsTool)).toBe(true);
    expect(isPathWithin('../.git/config', ['docs/**'], docsTool)).toBe(false);
    expect(isPathWithin('../.git/config', ['.git/**'], docsTool)).toBe(true);
  });
});

describe('path.under', () => {
  it.each([
    ['docs/readme.md', 'docs', true],
    ['docs', 'docs', true],
    ['docs-other/x', 'docs', false],
    ['docs/../src/a.ts', 'docs', false],
    ['docs/wf/x', '.github', true],
    ['docs-link/sub', 'docs', true],
    ['docs/readme.md', 'docs-link', true],
    ['docs/out/x', 'docs', false],
  ] as const)('%s under %s → %s', (p, dir, expected) => {
    expect(isPathUnder(p, dir, base)).toBe(expected);
  });
});

describe('paths a helper refuses (the rule then denies)', () => {
  it.each([
    ['.. after a symbolic link (kernel and normalising tools disagree)', 'docs/deep/../x', 'ambiguous_dotdot'],
    ['a symbolic link loop', 'loop-a/x', 'symlink_loop'],
    ['a NUL byte', 'docs/a\0b', 'invalid_path'],
    ['an empty path', '', 'invalid_path'],
    ['a number', 42, 'invalid_path'],
    ['a path past PATH_MAX', `docs/${'a'.repeat(5000)}`, 'too_long'],
  ] as const)('%s', (_what, p, reason) => {
    expect(() => resolveToolPath(p, base)).toThrow(PathHelperError);
    try {
      resolveToolPath(p, base);
    } catch (error) {
      expect((error as PathHelperError).reason).toBe(reason);
    }
  });

  it('a `..` after a link that lands where normalising lands is no ambiguity', () => {
    // docs-link/.. is the workspace both ways: the link's target (docs) sits in the workspace.
    expect(resolveToolPath('docs-link/../src', base)).toBe(join(ws, 'src'));
  });
});
