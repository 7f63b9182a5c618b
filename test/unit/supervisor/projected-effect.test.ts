// The projected effect shown to whoever approves a call (SPEC section 2
// `effects`, section 5 step 6): each written path resolved from the first
// workspace root, where it lies, and a bounded diff of a text write; hostile
// paths (traversal, absolute, a symlink out, a FIFO) are said so, never read.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Manifest, ManifestRoot } from '../../../src/registry/manifest.js';
import { MAX_DIFF_SOURCE_BYTES, projectEffects } from '../../../src/supervisor/projected-effect.js';
import { createRedactor } from '../../../src/supervisor/redact.js';
import { MAX_DIFF_LINES, MAX_EDIT_LINES } from '../../../src/supervisor/text-diff.js';

const temp = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-effect-')));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
const ws = join(temp, 'ws');
const docs = join(ws, 'docs');
const outside = join(temp, 'outside');
mkdirSync(docs, { recursive: true });
mkdirSync(outside);
writeFileSync(join(outside, 'secret.txt'), 'the outside secret\n');
symlinkSync(outside, join(ws, 'escape'));
symlinkSync(join(ws, 'docs'), join(ws, 'docs-link'));

const SECRET = 'sk-live-0123456789abcdef';
const redact = createRedactor({ secretValues: [SECRET], visibleRoots: [ws], hostRoots: [outside] });
const WRITABLE: ManifestRoot[] = [{ declared: '${WORKSPACE}', path: ws, access: 'read_write' }];

function tool(effects: Manifest['effects'], roots: readonly ManifestRoot[] = WRITABLE): Manifest {
  return { name: 'write_file', roots, ...(effects ? { effects } : {}) } as unknown as Manifest;
}
const WRITE = tool({ writes: ['path'], content: 'text' });

describe('projectEffects', () => {
  it('a tool without effects projects nothing', async () => {
    expect(await projectEffects(tool(undefined), { path: 'a' }, redact)).toEqual([]);
  });

  it('a new file: resolved from the first root, the diff from /dev/null', async () => {
    const [write] = await projectEffects(WRITE, { path: 'docs/new.md', text: 'one\ntwo\n' }, redact);
    expect(write).toEqual({
      argument: 'path',
      path: join(ws, 'docs/new.md'),
      where: 'writable_root',
      summary: 'creates a new file (+2 -0 lines)',
      diff: expect.stringContaining('--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+one\n+two'),
    });
  });

  it('an existing text file: a unified diff against it as it is now, secrets redacted', async () => {
    writeFileSync(join(docs, 'notes.md'), `title\nkey=${SECRET}\nold line\nend\n`);
    const [write] = await projectEffects(WRITE, { path: './docs/../docs/notes.md', text: `title\nkey=${SECRET}\nnew line\nend\n` }, redact);
    expect(write?.where).toBe('writable_root');
    expect(write?.path).toBe(join(docs, 'notes.md'));
    expect(write?.summary).toBe(`replaces a ${Buffer.byteLength(`title\nkey=${SECRET}\nold line\nend\n`)}-byte text file (+1 -1 lines)`);
    expect(write?.diff).toContain('--- a/docs/notes.md\n+++ b/docs/notes.md\n');
    expect(write?.diff).toContain('\n-old line\n+new line\n');
    expect(write?.diff).toContain(' key=[redacted]');
    expect(write?.diff).not.toContain(SECRET);
  });

  it('the same text: no change, no diff', async () => {
    writeFileSync(join(docs, 'same.md'), 'same\n');
    expect((await projectEffects(WRITE, { path: 'docs/same.md', text: 'same\n' }, redact))[0]).toMatchObject({
      summary: 'replaces a 5-byte text file: the same text, no change',
      diff: null,
    });
  });

  it.each([
    ['../outside/secret.txt', 'outside the workspace roots'],
    ['/etc/passwd', 'outside the workspace roots'],
    ['escape/secret.txt', 'through a symbolic link'],
    ['escape/new.txt', 'through a symbolic link'],
  ])('%s lies outside the roots: said so, nothing read', async (path, summary) => {
    const [write] = await projectEffects(WRITE, { path, text: 'x' }, redact);
    expect(write).toMatchObject({ where: 'outside_roots', diff: null, summary: expect.stringContaining(summary) });
    expect(JSON.stringify(write)).not.toContain('the outside secret');
  });

  it('a symlink that stays inside the workspace is followed, as the tool would', async () => {
    writeFileSync(join(docs, 'linked.md'), 'a\n');
    const [write] = await projectEffects(WRITE, { path: 'docs-link/linked.md', text: 'b\n' }, redact);
    expect(write).toMatchObject({ where: 'writable_root', summary: 'replaces a 2-byte text file (+1 -1 lines)' });
    expect(write?.diff).toContain('--- a/docs/linked.md');
  });

  it('a read-only root: the write will be refused', async () => {
    const roots: ManifestRoot[] = [...WRITABLE, { declared: 'docs', path: docs, access: 'read' }];
    expect((await projectEffects(tool({ writes: ['path'], content: 'text' }, roots), { path: 'docs/x.md', text: 'y' }, redact))[0]).toMatchObject({
      where: 'read_only_root',
      diff: null,
    });
    expect((await projectEffects(tool({ writes: ['path'], content: 'text' }, []), { path: 'x.md', text: 'y' }, redact))[0]).toMatchObject({
      where: 'outside_roots',
      summary: expect.stringContaining('no workspace root'),
    });
  });

  it('binary, oversized and non-text contents are summarised, not diffed', async () => {
    writeFileSync(join(docs, 'image.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    writeFileSync(join(docs, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    writeFileSync(join(docs, 'big.txt'), 'x'.repeat(MAX_DIFF_SOURCE_BYTES + 1));
    const project = async (path: string, text: unknown) => (await projectEffects(WRITE, { path, text }, redact))[0];
    expect(await project('docs/image.bin', 'text')).toMatchObject({ summary: 'replaces a 6-byte binary file with 4 bytes of text: no diff', diff: null });
    expect(await project('docs/latin1.txt', 'text')).toMatchObject({ summary: expect.stringContaining('binary file'), diff: null });
    expect(await project('docs/big.txt', 'small')).toMatchObject({ summary: expect.stringContaining('too large to diff'), diff: null });
    expect(await project('docs/new.txt', 'y'.repeat(MAX_DIFF_SOURCE_BYTES + 1))).toMatchObject({ summary: expect.stringContaining('too large to diff'), diff: null });
    expect(await project('docs/new.txt', { base64: 'AAAA' })).toMatchObject({ summary: 'creates a new file; the new content (text) is not text: no diff', diff: null });
    expect(await project('docs', 'text')).toMatchObject({ summary: 'the path is a folder, not a regular file', diff: null });
  });

  it('the diff is bounded in lines, and gives up on texts too different to diff within bounds', async () => {
    const lines = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix} ${index}`).join('\n');
    writeFileSync(join(docs, 'long.txt'), lines('old', 120));
    const [long] = await projectEffects(WRITE, { path: 'docs/long.txt', text: lines('new', 120) }, redact);
    expect(long?.summary).toMatch(/\(\+120 -120 lines, diff cut\)$/);
    const shown = (long?.diff ?? '').split('\n');
    expect(shown.length).toBe(MAX_DIFF_LINES + 1);
    // Two file headers, one hunk header, 240 changed lines, a "No newline" marker for each text.
    expect(shown.at(-1)).toBe(`… ${2 + 1 + 240 + 2 - MAX_DIFF_LINES} more lines of the diff left out`);
    // More changed lines than the diff may consider: summarised, not diffed.
    writeFileSync(join(docs, 'huge.txt'), lines('old', MAX_EDIT_LINES));
    expect((await projectEffects(WRITE, { path: 'docs/huge.txt', text: lines('new', MAX_EDIT_LINES) }, redact))[0]).toMatchObject({
      summary: expect.stringContaining('too many changes to diff'),
      diff: null,
    });
    // A new file of any length is all additions: its first lines are shown.
    const [created] = await projectEffects(WRITE, { path: 'docs/created.txt', text: `${lines('new', 20_000)}\n` }, redact);
    expect(created?.summary).toBe('creates a new file (+20000 -0 lines, diff cut)');
    const createdLines = (created?.diff ?? '').split('\n');
    expect(createdLines.slice(0, 4)).toEqual(['--- /dev/null', '+++ b/docs/created.txt', '@@ -0,0 +1,20000 @@', '+new 0']);
    expect(createdLines.at(-1)).toBe(`… ${20_000 - (MAX_DIFF_LINES - 3)} more lines of the diff left out`);
    const [short] = await projectEffects(WRITE, { path: 'docs/short.txt', text: 'one\ntwo' }, redact);
    expect(short?.diff).toBe('--- /dev/null\n+++ b/docs/short.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file');
  });

  it('no path, or not a string: said so', async () => {
    expect((await projectEffects(WRITE, { text: 'x' }, redact))[0]).toMatchObject({ where: 'no_path', path: null, summary: 'no path given' });
    expect((await projectEffects(WRITE, { path: 42, text: 'x' }, redact))[0]).toMatchObject({ where: 'no_path', path: null });
  });

  it('content: null shows the path and what is there, without a diff', async () => {
    writeFileSync(join(docs, 'edit.md'), 'abc\n');
    expect((await projectEffects(tool({ writes: ['path'], content: null }), { path: 'docs/edit.md', edits: [] }, redact))[0]).toEqual({
      argument: 'path',
      path: join(docs, 'edit.md'),
      where: 'writable_root',
      summary: 'replaces a 4-byte text file',
      diff: null,
    });
  });
});
