// ctx.fs path checks: roots, access, `..`, absolute paths, symlinks, bounds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createScopedFs, findRoot, type ScopedFsDenial } from '../../../sandbox/ctx/scoped-fs.mjs';

let base: string;
let workspace: string;
let readOnly: string;
let outside: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'toolhost-scoped-fs-')));
  workspace = path.join(base, 'ws');
  readOnly = path.join(base, 'ro');
  outside = path.join(base, 'outside');
  await mkdir(path.join(workspace, 'dir', 'nested'), { recursive: true });
  await mkdir(readOnly);
  await mkdir(outside);
  await writeFile(path.join(workspace, 'a.txt'), 'alpha');
  await writeFile(path.join(workspace, 'dir', 'b.txt'), 'bravo!');
  await writeFile(path.join(readOnly, 'r.txt'), 'read me');
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'to-secret'));
  await symlink(outside, path.join(workspace, 'to-outside'));
  await symlink(path.join(workspace, 'a.txt'), path.join(workspace, 'to-a'));
  await symlink(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

function scoped(maxes: { maxReadBytes?: number; maxListEntries?: number } = {}) {
  const denials: ScopedFsDenial[] = [];
  const fs = createScopedFs({
    roots: [
      { path: workspace, access: 'read_write' },
      { path: readOnly, access: 'read' },
    ],
    onDenied: (denial) => denials.push(denial),
    ...maxes,
  });
  return { fs, denials };
}

describe('createScopedFs: allowed', () => {
  it('reads relative to the first root and absolute inside any root', async () => {
    const { fs, denials } = scoped();
    expect(await fs.readText('a.txt')).toBe('alpha');
    expect(await fs.readText('dir/../a.txt')).toBe('alpha');
    expect(await fs.readText(path.join(readOnly, 'r.txt'))).toBe('read me');
    expect(await fs.readText('to-a')).toBe('alpha');
    expect(denials).toEqual([]);
  });

  it('lists with the entry shape the bundled tools use, sorted, links not followed', async () => {
    const { fs } = scoped();
    expect(await fs.list('.')).toEqual([
      { name: 'a.txt', type: 'file', size: 5 },
      { name: 'dangling', type: 'symlink', size: 0 },
      { name: 'dir', type: 'directory', size: 0 },
      { name: 'to-a', type: 'symlink', size: 0 },
      { name: 'to-outside', type: 'symlink', size: 0 },
      { name: 'to-secret', type: 'symlink', size: 0 },
    ]);
  });

  it('stats files and directories', async () => {
    const { fs } = scoped();
    const file = await fs.stat('dir/b.txt');
    expect(file.type).toBe('file');
    expect(file.size).toBe(6);
    expect(typeof file.mtimeMs).toBe('number');
    expect((await fs.stat('dir')).type).toBe('directory');
  });

  it('writes, creating missing parents, and replaces existing content', async () => {
    const { fs } = scoped();
    expect(await fs.writeText('made/deep/x.txt', 'long content')).toEqual({ bytes: 12 });
    expect(await fs.writeText('made/deep/x.txt', 'short')).toEqual({ bytes: 5 });
    expect(await readFile(path.join(workspace, 'made', 'deep', 'x.txt'), 'utf8')).toBe('short');
  });
});

describe('createScopedFs: refused', () => {
  const cases: Array<[string, 'readText' | 'list' | 'stat' | 'writeText', () => string, string]> = [
    ['.. escape', 'readText', () => '../../etc/passwd', 'parent_escape'],
    ['.. escape that comes back elsewhere', 'readText', () => '../outside/secret.txt', 'parent_escape'],
    ['absolute path elsewhere', 'readText', () => '/etc/passwd', 'outside_roots'],
    ['symlink to a file outside', 'readText', () => 'to-secret', 'symlink_outside'],
    ['symlinked directory', 'list', () => 'to-outside', 'symlink_outside'],
    ['file under a symlinked directory', 'stat', () => 'to-outside/secret.txt', 'symlink_outside'],
    ['write under a symlinked directory', 'writeText', () => 'to-outside/new.txt', 'symlink_outside'],
    ['write to a symlink pointing outside', 'writeText', () => 'to-secret', 'symlink_outside'],
    ['write through a dangling symlink', 'writeText', () => 'dangling', 'dangling_symlink'],
    ['write to a read-only root', 'writeText', () => path.join(readOnly, 'r.txt'), 'read_only_root'],
    ['NUL byte', 'readText', () => 'a.txt\0.png', 'invalid_path'],
  ];

  it.each(cases)('%s → policy_denied (%s), reported once', async (_name, op, target, reason) => {
    const { fs, denials } = scoped();
    const attempt = op === 'writeText' ? fs.writeText(target(), 'pwned') : fs[op](target());
    await expect(attempt).rejects.toMatchObject({ code: 'policy_denied' });
    expect(denials).toEqual([{ op, target: target(), reason }]);
  });

  it('refuses everything when there are no roots', async () => {
    const denials: ScopedFsDenial[] = [];
    const fs = createScopedFs({ roots: [], onDenied: (denial) => denials.push(denial) });
    await expect(fs.readText('a.txt')).rejects.toMatchObject({ code: 'policy_denied' });
    expect(denials).toEqual([{ op: 'readText', target: 'a.txt', reason: 'no_roots' }]);
  });

  it('left the outside directory and the read-only root unchanged', async () => {
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret');
    expect(await readFile(path.join(readOnly, 'r.txt'), 'utf8')).toBe('read me');
    await expect(readFile(path.join(outside, 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile(path.join(outside, 'not-yet.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('createScopedFs: errors and bounds', () => {
  it('reports missing files and wrong types without the host path', async () => {
    const { fs, denials } = scoped();
    const missing = fs.readText('nope.txt');
    await expect(missing).rejects.toMatchObject({ code: 'not_found' });
    await expect(missing).rejects.not.toMatchObject({ message: expect.stringContaining(workspace) });
    await expect(fs.readText('dir')).rejects.toMatchObject({ code: 'not_a_file' });
    await expect(fs.list('a.txt')).rejects.toMatchObject({ code: 'not_a_directory' });
    expect(denials).toEqual([]);
  });

  it('refuses a file larger than maxReadBytes', async () => {
    const { fs } = scoped({ maxReadBytes: 3 });
    await expect(fs.readText('a.txt')).rejects.toMatchObject({ code: 'too_large', maxBytes: 3 });
  });

  it('refuses a directory with more than maxListEntries entries', async () => {
    const { fs } = scoped({ maxListEntries: 2 });
    await expect(fs.list('.')).rejects.toMatchObject({ code: 'too_large', maxEntries: 2 });
  });

  it('refuses non-string text', async () => {
    const { fs } = scoped();
    await expect(fs.writeText('x.txt', 42 as unknown as string)).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

describe('findRoot', () => {
  it('picks the deepest root holding the path and nothing for siblings with a shared prefix', () => {
    const roots = [
      { path: '/w', access: 'read_write' as const },
      { path: '/w/ro', access: 'read' as const },
    ];
    expect(findRoot(roots, '/w/a')?.access).toBe('read_write');
    expect(findRoot(roots, '/w/ro/a')?.access).toBe('read');
    expect(findRoot(roots, '/w')?.path).toBe('/w');
    expect(findRoot(roots, '/wx/a')).toBeUndefined();
    expect(findRoot(roots, '/')).toBeUndefined();
  });
});
