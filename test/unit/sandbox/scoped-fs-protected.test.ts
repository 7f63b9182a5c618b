// ctx.fs and the host's own files: writes under a protected path (manifest
// folders, policies/, --policy files, the state folder) are refused as
// policy_denied with reason protected_path, however the path is spelled; the
// state folder (a hidden path) is refused to reads, listings and stats too.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createScopedFs, type ScopedFsDenial } from '../../../sandbox/ctx/scoped-fs.mjs';

describe('scoped fs: protected and hidden paths', () => {
  let root: string;
  let denials: ScopedFsDenial[];
  let fs: ReturnType<typeof createScopedFs>;

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-scoped-protected-')));
    mkdirSync(join(root, 'manifests/sub'), { recursive: true });
    writeFileSync(join(root, 'manifests/tool.yaml'), 'name: tool\n');
    mkdirSync(join(root, '.toolhost'));
    writeFileSync(join(root, '.toolhost/journal.sqlite'), 'journal');
    writeFileSync(join(root, 'org.yaml'), 'kind: Policy\n');
    symlinkSync(join(root, 'manifests'), join(root, 'link-to-manifests'));
    symlinkSync(join(root, 'manifests/tool.yaml'), join(root, 'link-to-manifest-file'));
    denials = [];
    fs = createScopedFs({
      roots: [{ path: root, access: 'read_write' }],
      // policies/ does not exist yet: it is protected all the same.
      protectedPaths: [join(root, 'manifests'), join(root, 'policies'), join(root, 'org.yaml'), join(root, '.toolhost')],
      hiddenPaths: [join(root, '.toolhost')],
      onDenied: (denial) => denials.push(denial),
    });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it.each([
    'manifests/evil.yaml',
    'manifests/tool.yaml',
    'manifests/sub/deeper/evil.yaml',
    'manifests',
    'policies/repository.yaml',
    'org.yaml',
    '.toolhost/journal.sqlite',
    '.toolhost/new',
    'sub/../manifests/evil.yaml',
    './manifests/../manifests/evil.yaml',
    'link-to-manifests/evil.yaml',
    'link-to-manifest-file',
  ])('writeText(%s) is refused as protected_path and changes nothing', async (path) => {
    await expect(fs.writeText(path, 'planted')).rejects.toMatchObject({ code: 'policy_denied' });
    expect(denials).toEqual([{ op: 'writeText', target: path, reason: 'protected_path' }]);
    expect(readFileSync(join(root, 'manifests/tool.yaml'), 'utf8')).toBe('name: tool\n');
    expect(readFileSync(join(root, '.toolhost/journal.sqlite'), 'utf8')).toBe('journal');
    expect(existsSync(join(root, 'manifests/evil.yaml'))).toBe(false);
    expect(existsSync(join(root, 'policies'))).toBe(false);
  });

  it('an absolute path is refused the same way', async () => {
    await expect(fs.writeText(join(root, 'manifests/evil.yaml'), 'x')).rejects.toMatchObject({ code: 'policy_denied' });
    expect(denials.map((denial) => denial.reason)).toEqual(['protected_path']);
  });

  it('reads of manifests and policies stay allowed; the state folder is hidden from every op', async () => {
    expect(await fs.readText('manifests/tool.yaml')).toBe('name: tool\n');
    expect((await fs.list('manifests')).map((entry) => entry.name)).toEqual(['sub', 'tool.yaml']);
    for (const [op, run] of [
      ['readText', () => fs.readText('.toolhost/journal.sqlite')],
      ['list', () => fs.list('.toolhost')],
      ['stat', () => fs.stat('.toolhost/journal.sqlite')],
      ['stat', () => fs.stat('.toolhost')],
    ] as const) {
      await expect(run()).rejects.toMatchObject({ code: 'policy_denied' });
      expect(denials.at(-1)).toMatchObject({ op, reason: 'protected_path' });
    }
  });

  it('a symlink planted toward the state folder does not reveal it', async () => {
    symlinkSync(join(root, '.toolhost'), join(root, 'state-link'));
    await expect(fs.readText('state-link/journal.sqlite')).rejects.toMatchObject({ code: 'policy_denied' });
    expect(denials).toEqual([{ op: 'readText', target: 'state-link/journal.sqlite', reason: 'protected_path' }]);
  });

  it('ordinary files beside the protected ones are written as before', async () => {
    expect(await fs.writeText('notes/manifests-copy.yaml', 'fine')).toEqual({ bytes: 4 });
    expect(await fs.writeText('manifests.txt', 'a sibling, not under the folder')).toEqual({ bytes: 31 });
    expect(denials).toEqual([]);
  });
});
