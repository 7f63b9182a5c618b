// protectedPathsOf: the host's configuration and state as canonical paths,
// symlinks resolved, missing folders (policies/, a state folder not yet made)
// spelled so the paths created under them later still match.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalPathOf, protectedPathsOf } from '../../../src/config/protected-paths.js';

describe('protectedPathsOf', () => {
  let root: string;
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-protected-paths-')));
    mkdirSync(join(root, 'real-ws/manifests'), { recursive: true });
    writeFileSync(join(root, 'org.yaml'), 'kind: Policy\n');
    symlinkSync(join(root, 'real-ws'), join(root, 'ws'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('resolves symlinks and keeps missing tails, with the state folder also hidden', () => {
    const paths = protectedPathsOf({
      manifestDirs: [join(root, 'ws/manifests'), join(root, 'real-ws/manifests')],
      policyFiles: [join(root, 'org.yaml')],
      workspace: join(root, 'ws'),
      stateDir: join(root, 'ws/.toolhost/state'),
      logFile: join(root, 'ws/host.log'),
    });
    expect(paths).toEqual({
      protectedPaths: [
        join(root, 'org.yaml'),
        join(root, 'real-ws/.toolhost/state'),
        join(root, 'real-ws/host.log'),
        join(root, 'real-ws/manifests'),
        join(root, 'real-ws/policies'),
      ],
      hiddenPaths: [join(root, 'real-ws/.toolhost/state')],
    });
  });

  it('protects no state folder when none is given (commands that run no tool)', () => {
    const paths = protectedPathsOf({ manifestDirs: [], policyFiles: [], workspace: join(root, 'ws') });
    expect(paths).toEqual({ protectedPaths: [join(root, 'real-ws/policies')], hiddenPaths: [] });
  });

  it('canonicalPathOf a path with no existing part is the path itself', () => {
    expect(canonicalPathOf('/nonexistent-toolhost-root/a/b')).toBe('/nonexistent-toolhost-root/a/b');
    expect(canonicalPathOf(join(root, 'ws/manifests/../manifests'))).toBe(join(root, 'real-ws/manifests'));
  });
});
