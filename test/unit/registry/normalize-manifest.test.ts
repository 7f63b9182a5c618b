import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifests } from '../../../src/registry/load-manifests.js';
import type { Manifest } from '../../../src/registry/manifest.js';

const REPO = realpathSync(fileURLToPath(new URL('../../../', import.meta.url)));
const GOOD = 'test/fixtures/manifests/good';

function loadOne(folder: string, workspace = REPO): Manifest {
  const result = loadManifests({ dirs: [`${GOOD}/${folder}`], workspace, cwd: REPO });
  expect(result.problems).toEqual([]);
  expect(result.manifests).toHaveLength(1);
  return result.manifests[0] as Manifest;
}

describe('normalized manifests', () => {
  it('applies the documented defaults', () => {
    const manifest = loadOne('defaults');
    const dir = join(REPO, GOOD, 'defaults');
    expect(manifest).toMatchObject({
      name: 'plain_tool',
      description: 'A fixture tool.',
      sideEffect: 'read_only',
      idempotent: true,
      concurrencySafe: false,
      timeoutMs: 1000,
      sandbox: { mode: 'isolate', stdout: 'json', isolation: 'none', persistent: false, poolSize: 1, env: [] },
      entry: join(dir, 'tool.js'),
      roots: [],
      networkAllow: [],
      format: 'json',
      approval: 'auto',
      input: { type: 'object', additionalProperties: false },
      file: join(dir, 'tool.yaml'),
      displayFile: `${GOOD}/defaults/tool.yaml`,
      dir,
    });
    expect(manifest.sandbox.memoryMb).toBeUndefined();
    expect(manifest.sandbox.command).toBeUndefined();
    expect(manifest.maxResultBytes).toBeUndefined();
    expect(manifest.output).toBeUndefined();
    expect(manifest.validateOutput).toBeUndefined();
  });

  it('leaves a tool without sideEffect unclassified, and not idempotent', () => {
    const manifest = loadOne('unclassified');
    expect(manifest.sideEffect).toBeUndefined();
    expect(manifest.idempotent).toBe(false);
  });

  it('keeps every declared value and resolves command paths, roots and the draft', () => {
    const manifest = loadOne('process');
    const dir = join(REPO, GOOD, 'process');
    expect(manifest).toMatchObject({
      name: 'counter',
      sideEffect: 'local_mutation',
      idempotent: false,
      // Declared true, but only a read_only tool may run beside other calls.
      concurrencySafe: false,
      timeoutMs: 2000,
      sandbox: {
        mode: 'process',
        memoryMb: 128,
        command: ['python3', join(dir, 'bin/count.py'), '--fast', join(dir, 'data.txt')],
        stdout: 'text',
        isolation: 'namespace',
        persistent: true,
        poolSize: 3,
        env: ['LANG', 'TZ'],
      },
      roots: [
        { declared: '${WORKSPACE}', path: REPO, access: 'read_write' },
        { declared: '${WORKSPACE}/docs', path: join(REPO, 'docs'), access: 'read' },
      ],
      networkAllow: ['api.github.com', 'localhost:8080'],
      maxResultBytes: 4096,
      format: 'xml',
      approval: 'always',
    });
    expect(manifest.entry).toBeUndefined();
    expect(manifest.source.positionOf(['approval'])).toEqual({ line: 26, col: 11 });
  });

  it('compiles the input schema once, without allErrors, in its declared draft', () => {
    const manifest = loadOne('process');
    // draft-07 tuple form of items: [{type: integer}] only means something under draft-07.
    expect(manifest.validateInput({ path: 'abc', items: [1] })).toBe(true);
    expect(manifest.validateInput({ path: 'abc', items: ['x'] })).toBe(false);
    // Two faults, one error: untrusted arguments stop at the first failure.
    expect(manifest.validateInput({ path: 'ABC', extra: 1 })).toBe(false);
    expect(manifest.validateInput.errors).toHaveLength(1);
    expect(manifest.validateOutput?.({ count: 3 })).toBe(true);
    expect(manifest.validateOutput?.({ count: 'three' })).toBe(false);
  });

  it('accepts local references', () => {
    const manifest = loadOne('local-refs');
    expect(manifest.validateInput({ first: 'short' })).toBe(true);
    expect(manifest.validateInput({ first: 'much too long for ten' })).toBe(false);
  });

  it('substitutes the workspace given in the options', () => {
    const manifest = loadOne('process', join(REPO, 'test'));
    expect(manifest.roots.map((root) => root.path)).toEqual([join(REPO, 'test'), join(REPO, 'test', 'docs')]);
  });

  it('freezes the manifest and its nested values', () => {
    const manifest = loadOne('process');
    expect(Object.isFrozen(manifest)).toBe(true);
    expect(Object.isFrozen(manifest.sandbox)).toBe(true);
    expect(Object.isFrozen(manifest.sandbox.command)).toBe(true);
    expect(Object.isFrozen(manifest.roots[0])).toBe(true);
    expect(Object.isFrozen(manifest.input['properties'])).toBe(true);
  });

  it('shows an absolute displayFile for a manifest outside the working directory', () => {
    const result = loadManifests({ dirs: [join(REPO, GOOD, 'defaults')], workspace: REPO, cwd: join(REPO, 'src') });
    expect(result.manifests[0]?.displayFile).toBe(join(REPO, GOOD, 'defaults', 'tool.yaml'));
  });
});
