// guardHostFiles: which binds and masks keep the host's own files out of a
// process tool's reach (the real mounts are tested in
// test/integration/sandbox/protected-paths.test.ts).
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { guardHostFiles, type SandboxBinds } from '../../../../src/runner/bwrap/guard.js';

describe('guardHostFiles', () => {
  let ws: string;
  beforeEach(() => {
    ws = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-guard-')));
    mkdirSync(join(ws, 'a/b/manifests'), { recursive: true });
    mkdirSync(join(ws, '.toolhost'));
    writeFileSync(join(ws, 'org.yaml'), 'kind: Policy\n');
  });
  afterEach(() => rmSync(ws, { recursive: true, force: true }));

  it('re-binds protected paths inside a read_write root read-only and pins the folders above them', () => {
    const binds: SandboxBinds = new Map([[ws, 'rw']]);
    const after = guardHostFiles(
      { protectedPaths: [join(ws, 'a/b/manifests'), join(ws, 'org.yaml'), join(ws, 'policies'), join(ws, '.toolhost')], hiddenPaths: [join(ws, '.toolhost')] },
      binds,
    );
    expect(Object.fromEntries(binds)).toEqual({
      [ws]: 'rw',
      [join(ws, 'a')]: 'rw',
      [join(ws, 'a/b')]: 'rw',
      [join(ws, 'a/b/manifests')]: 'ro',
      [join(ws, 'org.yaml')]: 'ro',
    });
    // The missing policies/ gets no mount: its mount point would be created in the host's tree.
    expect(after).toEqual(['--tmpfs', join(ws, '.toolhost'), '--remount-ro', join(ws, '.toolhost')]);
  });

  it('sandboxes create nothing on the host: no mount for a missing protected or hidden path, even in a read_write root', () => {
    const binds: SandboxBinds = new Map([[ws, 'rw']]);
    const after = guardHostFiles({ protectedPaths: [join(ws, 'policies'), join(ws, 'missing-state')], hiddenPaths: [join(ws, 'missing-state')] }, binds);
    expect(after).toEqual([]);
    expect(Object.fromEntries(binds)).toEqual({ [ws]: 'rw' });
  });

  it('leaves paths the sandbox does not show alone, and hides the state folder inside a read-only root', () => {
    const binds: SandboxBinds = new Map([[join(ws, 'a'), 'ro']]);
    const after = guardHostFiles(
      { protectedPaths: [join(ws, 'a/b/manifests'), join(ws, 'org.yaml'), join(ws, 'a/missing'), join(ws, 'a/b')], hiddenPaths: [join(ws, 'a/b')] },
      binds,
    );
    expect(Object.fromEntries(binds)).toEqual({ [join(ws, 'a')]: 'ro' });
    expect(after).toEqual(['--tmpfs', join(ws, 'a/b'), '--remount-ro', join(ws, 'a/b')]);
  });

  it('turns a read_write bind inside a protected folder read-only', () => {
    const binds: SandboxBinds = new Map([[join(ws, 'a/b/manifests'), 'rw']]);
    expect(guardHostFiles({ protectedPaths: [join(ws, 'a/b')], hiddenPaths: [] }, binds)).toEqual([]);
    expect(Object.fromEntries(binds)).toEqual({ [join(ws, 'a/b/manifests')]: 'ro' });
  });

  it('does nothing without protected paths (an older RunSpec)', () => {
    const binds: SandboxBinds = new Map([[ws, 'rw']]);
    expect(guardHostFiles({} as never, binds)).toEqual([]);
    expect(Object.fromEntries(binds)).toEqual({ [ws]: 'rw' });
  });
});
