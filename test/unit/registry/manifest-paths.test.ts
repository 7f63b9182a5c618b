import { describe, expect, it } from 'vitest';
import { isInside, resolveCommandElement, resolveRoot } from '../../../src/registry/manifest-paths.js';

describe('isInside', () => {
  it.each([
    ['/a/b', '/a/b', true],
    ['/a/b', '/a/b/c', true],
    ['/a/b', '/a/b/..c', true],
    ['/a/b', '/a/bc', false],
    ['/a/b', '/a', false],
    ['/a/b', '/x/y', false],
  ])('%s holds %s: %s', (dir, path, expected) => {
    expect(isInside(dir, path)).toBe(expected);
  });
});

describe('resolveRoot', () => {
  it('substitutes ${WORKSPACE} everywhere and normalizes', () => {
    expect(resolveRoot('${WORKSPACE}/docs/../src', '/no/such/ws')).toEqual({ ok: true, path: '/no/such/ws/src' });
  });

  it('keeps an absolute path as it is, and refuses relative paths and unknown variables', () => {
    expect(resolveRoot('/no/such/data', '/ws')).toEqual({ ok: true, path: '/no/such/data' });
    expect(resolveRoot('data', '/ws')).toMatchObject({ ok: false, reason: expect.stringContaining('must be absolute') });
    expect(resolveRoot('${WORKSPACES}/x', '/ws')).toMatchObject({ ok: false, reason: expect.stringContaining('unknown variable ${WORKSPACES}') });
  });
});

describe('resolveCommandElement', () => {
  it('keeps a bare program and plain arguments, refuses a first element with a slash', () => {
    expect(resolveCommandElement('/m', 'python3', 0)).toEqual({ ok: true, path: 'python3' });
    expect(resolveCommandElement('/m', '--flag=a/b', 1)).toEqual({ ok: true, path: '--flag=a/b' });
    expect(resolveCommandElement('/m', '/etc/passwd', 1)).toEqual({ ok: true, path: '/etc/passwd' });
    expect(resolveCommandElement('/m', 'bin/tool', 0)).toMatchObject({ ok: false, reason: expect.stringContaining('must be a program name found on PATH') });
    expect(resolveCommandElement('/m', '/bin/sh', 0)).toMatchObject({ ok: false, reason: expect.stringContaining('must be a program name found on PATH') });
  });
});
