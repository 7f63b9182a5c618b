// Policy files are refused with file:line:col and a reason, every problem of a
// file at once; the repository layer is the top level of policies/ only.
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { loadPolicies } from '../../../src/policy/load-policies.js';
import { mergePolicies } from '../../../src/policy/merge.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/policies/', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function loadOrg(name: string) {
  return loadPolicies({ policyFiles: [join(FIXTURES, name)], workspace: join(FIXTURES, 'no-such-workspace'), cwd: FIXTURES });
}

describe('refused policy files', () => {
  it('unknown keys, at the key, with a suggestion', () => {
    const { files, problems } = loadOrg('unknown-key.yaml');
    expect(files).toEqual([]);
    expect(problems).toEqual([
      { file: 'unknown-key.yaml', line: 3, col: 1, reason: 'unknown key "stirct" in policy file (did you mean "strict"?)' },
      { file: 'unknown-key.yaml', line: 5, col: 3, reason: 'unknown key "maxTimeout" in limits (did you mean "maxTimeoutMs"?)' },
    ]);
  });

  it('invalid YAML', () => {
    const { problems } = loadOrg('invalid-yaml.yaml');
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatchObject({ file: 'invalid-yaml.yaml', line: 5, col: 1 });
    expect(problems[0]?.reason.startsWith('invalid YAML')).toBe(true);
  });

  it('duplicate keys', () => {
    const { problems } = loadOrg('duplicate-key.yaml');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: 'duplicate-key.yaml', line: 4, col: 1 });
    expect(problems[0]?.reason.startsWith('duplicate key')).toBe(true);
  });

  it('a missing kind', () => {
    expect(loadOrg('missing-kind.yaml').problems).toEqual([{ file: 'missing-kind.yaml', line: 1, col: 1, reason: 'missing required key "kind" in policy file' }]);
  });

  it('bad values: every problem of the file at once', () => {
    const { problems } = loadOrg('bad-values.yaml');
    expect(problems).toEqual([
      { file: 'bad-values.yaml', line: 3, col: 7, reason: 'mode must be one of: enforce, shadow' },
      { file: 'bad-values.yaml', line: 5, col: 10, reason: 'sideEffects.deny.0 must be one of: read_only, local_mutation, remote_mutation, destructive' },
      { file: 'bad-values.yaml', line: 7, col: 17, reason: 'limits.maxTimeoutMs must be >= 1' },
      { file: 'bad-values.yaml', line: 8, col: 16, reason: 'onUnknownTool must be protocol_error, error_result or {rewrite: tool_name}' },
      { file: 'bad-values.yaml', line: 10, col: 24, reason: 'sandbox.community.1 must be one of: isolate, worker, process, process_namespace' },
    ]);
  });

  it('a file that cannot be read', () => {
    expect(loadOrg('missing.yaml').problems).toEqual([{ file: 'missing.yaml', line: 1, col: 1, reason: 'cannot read file (ENOENT)' }]);
  });

  it('an unknown ${VARIABLE} in allowedRoots', () => {
    const { files, problems } = loadOrg('unknown-variable.yaml');
    expect(problems).toEqual([]);
    expect(mergePolicies(files, '/ws').problems).toEqual([
      { file: 'unknown-variable.yaml', line: 4, col: 18, reason: 'workspace.allowedRoots: unknown variable ${HOME} (only ${WORKSPACE} is substituted)' },
    ]);
  });

  it('mode: shadow in a repository file', () => {
    const { files, problems } = loadPolicies({ policyFiles: [], workspace: join(FIXTURES, 'repo-shadow'), cwd: FIXTURES });
    expect(files).toEqual([]);
    expect(problems).toEqual([
      { file: 'repo-shadow/policies/trial.yaml', line: 3, col: 7, reason: 'mode: shadow is only allowed in organisation policy files (given with --policy)' },
    ]);
  });

  it('the same file as organisation policy is allowed to be in shadow mode', () => {
    const { files, problems } = loadPolicies({ policyFiles: [join(FIXTURES, 'repo-shadow/policies/trial.yaml')], workspace: join(FIXTURES, 'repo-shadow'), cwd: FIXTURES });
    expect(problems).toEqual([]);
    expect(files.map((file) => [file.layer, file.mode])).toEqual([['organisation', 'shadow']]);
  });
});

describe('layers', () => {
  it('the bundled repository reads policies/*.yaml only, not policies/org/', () => {
    const { files, problems } = loadPolicies({ policyFiles: [join(REPO_ROOT, 'policies/org/acme-baseline.yaml')], workspace: REPO_ROOT, cwd: REPO_ROOT });
    expect(problems).toEqual([]);
    expect(files.map((file) => [file.layer, file.file])).toEqual([
      ['organisation', 'policies/org/acme-baseline.yaml'],
      ['repository', 'policies/repository.yaml'],
    ]);
  });
});
