import { describe, expect, it } from 'vitest';
import { matchGlob } from '../../../src/policy/globs.js';
import { isHostAllowed } from '../../../src/policy/assess-tool.js';

describe('matchGlob', () => {
  it.each([
    ['shell_*', 'shell_run', {}, true],
    ['shell_*', 'my_shell_run', {}, false],
    ['*', 'anything', {}, true],
    ['read_?ile', 'read_file', {}, true],
    ['a.b', 'aXb', {}, false],
    ['*_TOKEN', 'github_token', { ignoreCase: true }, true],
    ['*_TOKEN', 'github_token', {}, false],
    ['manifests/*.yaml', 'manifests/a.yaml', { path: true }, true],
    ['manifests/*.yaml', 'manifests/community/a.yaml', { path: true }, false],
    ['manifests/**', 'manifests/community/a.yaml', { path: true }, true],
    ['manifests/**/a.yaml', 'manifests/a.yaml', { path: true }, true],
    ['manifests/**/a.yaml', 'manifests/x/y/a.yaml', { path: true }, true],
    ['manifests/?.yaml', 'manifests/ab.yaml', { path: true }, false],
  ] as const)('%s vs %s (%o) → %s', (pattern, text, options, expected) => {
    expect(matchGlob(pattern, text, options)).toBe(expected);
  });
});

describe('isHostAllowed', () => {
  it.each([
    ['api.github.com', 'api.github.com', true],
    ['API.GitHub.com', 'api.github.com', true],
    ['api.github.com:443', 'api.github.com', true],
    ['api.github.com', 'api.github.com:443', false],
    ['api.github.com:443', 'api.github.com:443', true],
    ['api.github.com:8443', 'api.github.com:443', false],
    ['a.example.org', '*.example.org', true],
    ['example.org', '*.example.org', false],
    ['evil.com', 'api.github.com', false],
    ['[::1]:8080', '[::1]', true],
  ] as const)('%s allowed by %s → %s', (host, entry, expected) => {
    expect(isHostAllowed(host, entry)).toBe(expected);
  });
});
