// The namespace sandbox and the host's own files, through the real bubblewrap
// argv: protected paths inside a read_write root are read-only (even when they
// do not exist yet, even by renaming a folder above them), and the state folder
// is an empty read-only folder.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeSpec, runProbe, useSandboxTest } from '../../helpers/sandbox-run.js';

describe('namespace sandbox: protected paths', () => {
  const sandbox = useSandboxTest('toolhost-sbx-protected-');

  it('keeps a deep manifest folder, a missing policies/ and the state folder out of reach', async () => {
    const ws = sandbox.workspace.path;
    const manifests = join(ws, 'config/tools/manifests');
    const state = join(ws, '.toolhost');
    mkdirSync(manifests, { recursive: true });
    writeFileSync(join(manifests, 'tool.yaml'), 'name: tool\n');
    mkdirSync(state);
    writeFileSync(join(state, 'journal.sqlite'), 'journal');
    const spec = probeSpec(sandbox.marker, {
      roots: [{ path: ws, access: 'read_write' }],
      protectedPaths: [manifests, join(ws, 'policies'), state],
      hiddenPaths: [state],
    });
    const results = await runProbe(spec, { cwd: ws }, [
      { op: 'write', path: join(ws, 'ordinary.txt') },
      { op: 'write', path: join(manifests, 'evil.yaml') },
      { op: 'write', path: join(manifests, 'tool.yaml') },
      { op: 'read', path: join(manifests, 'tool.yaml') },
      // Moving a folder above the protected one would free its host path to be recreated.
      { op: 'rename', path: join(ws, 'config'), to: join(ws, 'moved') },
      { op: 'rename', path: join(ws, 'config/tools'), to: join(ws, 'config/moved') },
      { op: 'rename', path: manifests, to: join(ws, 'config/tools/moved') },
      { op: 'list', path: state },
      { op: 'read', path: join(state, 'journal.sqlite') },
      { op: 'write', path: join(state, 'journal.sqlite') },
      { op: 'rename', path: state, to: join(ws, 'state-moved') },
    ]);
    expect(results[0]).toEqual({ ok: true });
    expect(results.slice(1, 3)).toEqual([{ error: 'EROFS' }, { error: 'EROFS' }]);
    expect(results[3]).toEqual({ ok: 'name: tool\n' });
    for (const renamed of results.slice(4, 7)) expect(['EBUSY', 'EROFS', 'EXDEV']).toContain((renamed as { error: string }).error);
    expect(results[7]).toEqual({ ok: [] });
    expect(results[8]).toEqual({ error: 'ENOENT' });
    expect(results[9]).toEqual({ error: 'EROFS' });
    expect(['EBUSY', 'EROFS', 'EXDEV']).toContain((results[10] as { error: string }).error);

    expect(readdirSync(manifests)).toEqual(['tool.yaml']);
    expect(readFileSync(join(manifests, 'tool.yaml'), 'utf8')).toBe('name: tool\n');
    expect(readFileSync(join(state, 'journal.sqlite'), 'utf8')).toBe('journal');
    expect(existsSync(join(ws, 'moved'))).toBe(false);
    expect(existsSync(join(ws, 'state-moved'))).toBe(false);
    // Sandboxes create nothing on the host: no mount point for the missing policies/ folder
    // (a tool that creates it is refused by the supervisor: test/integration/supervisor/hardening.test.ts).
    expect(existsSync(join(ws, 'policies'))).toBe(false);
  });

  it('a read_write root declared inside a protected folder is read-only', async () => {
    const manifests = join(sandbox.workspace.path, 'manifests');
    mkdirSync(join(manifests, 'data'), { recursive: true });
    const spec = probeSpec(sandbox.marker, {
      roots: [{ path: join(manifests, 'data'), access: 'read_write' }],
      protectedPaths: [manifests],
      hiddenPaths: [],
    });
    const results = await runProbe(spec, { cwd: join(manifests, 'data') }, [{ op: 'write', path: join(manifests, 'data/evil.yaml') }]);
    expect(results).toEqual([{ error: 'EROFS' }]);
    expect(readdirSync(join(manifests, 'data'))).toEqual([]);
  });
});
