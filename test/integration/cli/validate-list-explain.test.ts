// The built CLI, spawned as a user runs it (`npm test` builds dist/ first):
// validate, list and explain on the bundled manifests and policies and on bad
// fixtures, with their exit codes and stable output.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { TOOL_SUMMARY_FIELDS } from '../../../src/cli/tool-summary.js';
import { runBuiltCli } from '../../helpers/cli-runs.js';
import { BUILT_MAIN as MAIN } from '../../helpers/mcp-clients.js';
import { newMarker, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MARKER = newMarker('cli');

function toolhost(...args: string[]) {
  return runBuiltCli(args, { marker: MARKER, cwd: ROOT, env: { GITHUB_TOKEN: 'ghp-not-a-real-token' }, timeoutMs: 120_000 });
}

function lineOf(file: string, needle: string): number {
  const index = readFileSync(`${ROOT}/${file}`, 'utf8')
    .split('\n')
    .findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`${needle} not in ${file}`);
  return index + 1;
}

const APPROVAL_RULE = `policies/repository.yaml:${lineOf('policies/repository.yaml', '- destructive')} sideEffects.requireApproval`;

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error('dist/ is missing: run `npx tsc -p .` (npm test builds first)');
});

afterAll(async () => {
  expect(await waitForNoMarkedProcesses(MARKER)).toEqual([]);
});

describe('toolhost validate', () => {
  it('exits 0 on the bundled manifests and policies', async () => {
    const { code, stdout, stderr } = await toolhost('validate');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(/^ok: /);
    // The bundled upstream server (manifests/servers/fs.yaml) starts in its sandbox under the
    // built-in limits (memoryMb 256, held by its memory cgroup) and every tool is offered.
    expect(stdout).toContain('server fs (manifests/servers/fs.yaml): 14 of 14 tools offered');
  });

  it('exits 0 with the bundled organisation baseline and shadow trial', async () => {
    const result = await toolhost('validate', '--policy', 'policies/org/acme-baseline.yaml', '--policy', 'policies/org/acme-trial-shadow.yaml');
    expect(result.code).toBe(0);
  });

  it('exits 1 naming file:line:col and the rule for each excluded tool', async () => {
    const { code, stderr } = await toolhost('validate', '--policy', 'test/fixtures/policies/tight-org.yaml');
    expect(code).toBe(1);
    const lines = stderr.trimEnd().split('\n');
    const timeoutRule = `test/fixtures/policies/tight-org.yaml:${lineOf('test/fixtures/policies/tight-org.yaml', 'maxTimeoutMs')} limits.maxTimeoutMs`;
    const networkRule = `test/fixtures/policies/tight-org.yaml:${lineOf('test/fixtures/policies/tight-org.yaml', 'allow: []')} network.allow`;
    expect(lines).toContain(
      `manifests/delete_path.yaml:${lineOf('manifests/delete_path.yaml', 'timeoutMs')}:12: tool "delete_path" excluded: timeoutMs 10000 is above the policy maximum 5000 (${timeoutRule})`,
    );
    expect(lines).toContain(
      `manifests/http_get.yaml:${lineOf('manifests/http_get.yaml', 'allow:')}:11: tool "http_get" excluded: network host api.github.com is not allowed by test/fixtures/policies/tight-org.yaml (organisation) (${networkRule})`,
    );
    // A server the policy excludes is named as the server, not by its start-up probe's name.
    expect(lines).toContain(
      `manifests/servers/fs.yaml:${lineOf('manifests/servers/fs.yaml', 'timeoutMs')}:12: server "fs" excluded: timeoutMs 15000 is above the policy maximum 5000 (${timeoutRule})`,
    );
    expect(stderr).not.toContain('fs__');
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^[^:]+:\d+:\d+: /);
    expect(lines.at(-1)).toMatch(/^toolhost validate: \d+ problems; /);
  });

  it.each([
    ['unknown-key.yaml', ['test/fixtures/policies/unknown-key.yaml:3:1: unknown key "stirct" in policy file (did you mean "strict"?)']],
    ['missing-kind.yaml', ['test/fixtures/policies/missing-kind.yaml:1:1: missing required key "kind" in policy file']],
    ['duplicate-key.yaml', [expect.stringMatching(/^test\/fixtures\/policies\/duplicate-key\.yaml:4:1: duplicate key/)]],
    ['invalid-yaml.yaml', [expect.stringMatching(/^test\/fixtures\/policies\/invalid-yaml\.yaml:5:1: invalid YAML/)]],
  ])('exits 1 on the bad policy %s', async (fixture, expected) => {
    const { code, stderr } = await toolhost('validate', '--policy', `test/fixtures/policies/${fixture}`);
    expect(code).toBe(1);
    const lines = stderr.trimEnd().split('\n');
    expect(lines.slice(0, expected.length)).toEqual(expected);
  });

  it('exits 1 on a bad manifest folder', async () => {
    const { code, stderr } = await toolhost('validate', '--manifests', 'test/fixtures/manifests/bad/invalid-yaml');
    expect(code).toBe(1);
    expect(stderr.split('\n')[0]).toMatch(/^test\/fixtures\/manifests\/bad\/invalid-yaml\/tool\.yaml:\d+:\d+: /);
  });

  it('exits 2 on bad usage, 0 on --help', async () => {
    expect((await toolhost('validate', '--no-such-flag')).code).toBe(2);
    expect((await toolhost('validate', 'extra')).code).toBe(2);
    const help = await toolhost('validate', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: toolhost validate');
  });
});

describe('toolhost list', () => {
  it('--json prints the documented fields for every tool, in name order', async () => {
    const { code, stdout } = await toolhost('list', '--json');
    expect(code).toBe(0);
    const tools = JSON.parse(stdout) as Record<string, unknown>[];
    const names = tools.map((tool) => tool['name']);
    expect(names).toEqual([...names].sort());
    for (const tool of tools) {
      expect(Object.keys(tool)).toEqual([...TOOL_SUMMARY_FIELDS]);
    }
    expect(tools.find((tool) => tool['name'] === 'delete_path')).toEqual({
      name: 'delete_path',
      file: 'manifests/delete_path.yaml',
      sideEffect: 'destructive',
      mode: 'process',
      isolation: 'namespace',
      trust: 'community',
      listed: true,
      excluded: false,
      decision: 'ask',
      code: null,
      rule: APPROVAL_RULE,
      reason: 'destructive calls need approval',
      shadow: null,
      limits: { timeoutMs: 10000, maxResultBytes: 1048576, memoryMb: 256 },
      // These machines have cgroup v1 with a writable memory controller: memoryMb is held by it.
      memory: { heldBy: 'cgroup', cgroupVersion: 1, reason: null },
      terminal: false,
      upstream: null,
    });
    expect(tools.find((tool) => tool['name'] === 'json_format')).toMatchObject({ trust: 'community', listed: true, decision: 'allow', rule: null });
    expect(tools.filter((tool) => tool['terminal'] === true).map((tool) => tool['name'])).toEqual(['finish']);
    // Every bundled tool runs in a sandbox of its own (none is a worker in the host): each is held by its memory cgroup.
    expect(new Set(tools.map((tool) => (tool['memory'] as { heldBy: string }).heldBy))).toEqual(new Set(['cgroup']));
  });

  it('prints tab-separated columns with a header when stdout is not a terminal', async () => {
    const { code, stdout } = await toolhost('list');
    expect(code).toBe(0);
    const rows = stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(rows[0]).toEqual(['NAME', 'CLASS', 'SANDBOX', 'TRUST', 'LISTED', 'DECISION', 'RULE']);
    expect(rows.find((row) => row[0] === 'delete_path')).toEqual(['delete_path', 'destructive', 'process+namespace', 'community', 'yes', 'ask', APPROVAL_RULE]);
  });

  it('prints an aligned table with a header rule on a terminal', async () => {
    // script(1) gives the CLI a pseudo-terminal as stdout, as a person's shell would.
    const command = `'${process.execPath}' --no-node-snapshot '${MAIN}' list`;
    const result = await execa('script', ['-qec', command, '/dev/null'], { cwd: ROOT, reject: false, env: { TOOLHOST_TEST_MARKER: MARKER }, timeout: 120_000 });
    expect(result.exitCode).toBe(0);
    const lines = String(result.stdout).split(/\r?\n/);
    expect(lines[0]).toMatch(/^NAME +CLASS +SANDBOX +TRUST +LISTED +DECISION +RULE$/);
    expect(lines[1]).toMatch(/^-+ {2}-+ {2}-+/);
    expect(lines.find((line) => line.startsWith('delete_path '))).toMatch(
      /^delete_path +destructive +process\+namespace +community +yes +ask +policies\/repository\.yaml:\d+ sideEffects\.requireApproval$/,
    );
    expect(String(result.stdout)).not.toContain('\t');
  });

  it('shows excluded tools as not listed, with the rule', async () => {
    const { code, stdout } = await toolhost('list', '--json', '--policy', 'test/fixtures/policies/tight-org.yaml');
    expect(code).toBe(0);
    const httpGet = (JSON.parse(stdout) as Record<string, unknown>[]).find((tool) => tool['name'] === 'http_get');
    expect(httpGet).toMatchObject({
      listed: false,
      excluded: true,
      decision: 'deny',
      code: 'policy_denied',
      rule: `test/fixtures/policies/tight-org.yaml:${lineOf('test/fixtures/policies/tight-org.yaml', 'maxTimeoutMs')} limits.maxTimeoutMs`,
    });
  });

  it('a server the policy excludes is reported with the rule, never started, and list still exits 0', async () => {
    const { code, stdout, stderr } = await toolhost('list', '--policy', 'test/fixtures/policies/tight-org.yaml');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(
      /server fs \(manifests\/servers\/fs\.yaml\): excluded by the policy: timeoutMs 15000 is above the policy maximum 5000 \(test\/fixtures\/policies\/tight-org\.yaml:\d+ limits\.maxTimeoutMs\)/,
    );
  });
});

describe('toolhost explain', () => {
  it('names the rule that requires approval for delete_path, with file and line', async () => {
    const { code, stdout } = await toolhost('explain', 'delete_path');
    expect(code).toBe(0);
    expect(stdout.split('\n')).toContain(`  rule      ${APPROVAL_RULE}`);
    expect(stdout).toMatch(new RegExp(`ask\\s+sideEffects\\.requireApproval\\s+destructive calls need approval\\s+${APPROVAL_RULE.replace(/[.*]/g, '\\$&')}`));
  });

  it('--json lists every key in force with its layer, file and line', async () => {
    const { code, stdout } = await toolhost('explain', 'delete_path', '--json', '--policy', 'policies/org/acme-baseline.yaml');
    expect(code).toBe(0);
    const explanation = JSON.parse(stdout) as { rule: string; keys: { key: string; layer: string; file: string | null; line: number | null; rule: string; status: string }[] };
    const orgLine = lineOf('policies/org/acme-baseline.yaml', '- destructive');
    expect(explanation.rule).toBe(`policies/org/acme-baseline.yaml:${orgLine} sideEffects.requireApproval`);
    const approvalRows = explanation.keys.filter((row) => row.key === 'sideEffects.requireApproval');
    expect(approvalRows.map((row) => [row.layer, row.file])).toEqual([
      ['organisation', 'policies/org/acme-baseline.yaml'],
      ['repository', 'policies/repository.yaml'],
    ]);
    expect(explanation.keys.find((row) => row.key === 'limits.maxTimeoutMs')).toMatchObject({
      layer: 'organisation',
      file: 'policies/org/acme-baseline.yaml',
      line: lineOf('policies/org/acme-baseline.yaml', 'maxTimeoutMs'),
    });
    // Every layer that sets a scalar key is a row: the tightest is in force, the others overridden by it.
    const repositoryRule = `policies/repository.yaml:${lineOf('policies/repository.yaml', 'maxCallsPerSession')} limits.maxCallsPerSession`;
    expect(explanation.keys.filter((row) => row.key === 'limits.maxCallsPerSession')).toEqual([
      expect.objectContaining({ layer: 'organisation', value: 1000, status: 'overridden', overriddenBy: repositoryRule }),
      expect.objectContaining({ layer: 'repository', value: 500, status: 'in_force', rule: repositoryRule }),
    ]);
    expect(explanation.keys.find((row) => row.key === 'onInvalidArguments')).toMatchObject({ layer: 'organisation' });
    expect(explanation.keys.find((row) => row.key === 'limits.maxConsecutiveFailures')).toMatchObject({
      layer: 'organisation',
      line: lineOf('policies/org/acme-baseline.yaml', 'maxConsecutiveFailures: 20'),
    });
  });

  it('shows limits.maxConsecutiveFailures with its built-in default when no file sets it', async () => {
    const { code, stdout } = await toolhost('explain', 'read_file', '--json');
    expect(code).toBe(0);
    const explanation = JSON.parse(stdout) as { keys: { key: string; layer: string; value?: unknown; rule: string }[] };
    expect(explanation.keys.find((row) => row.key === 'limits.maxConsecutiveFailures')).toMatchObject({ layer: 'built-in', rule: '(built-in) limits.maxConsecutiveFailures' });
  });

  it('shows the shadow decision of a shadow-mode organisation file', async () => {
    const { code, stdout } = await toolhost('explain', 'delete_path', '--json', '--policy', 'policies/org/acme-trial-shadow.yaml');
    expect(code).toBe(0);
    const explanation = JSON.parse(stdout) as { decision: string; shadow: unknown; shadowKeys: { key: string }[] };
    expect(explanation.decision).toBe('ask');
    expect(explanation.shadow).toEqual({
      decision: 'deny',
      code: 'policy_denied',
      rule: `policies/org/acme-trial-shadow.yaml:${lineOf('policies/org/acme-trial-shadow.yaml', 'deny:')} sideEffects.deny`,
      reason: 'destructive tools are denied',
    });
    expect(explanation.shadowKeys.map((row) => row.key)).toEqual(['sideEffects.deny']);
  });

  it('with arguments: valid ones say what a call would meet, invalid ones exit 1', async () => {
    const valid = await toolhost('explain', 'delete_path', '{"path": "notes.txt"}');
    expect(valid.code).toBe(0);
    expect(valid.stdout).toContain(`a call would: ask for approval, then run (${APPROVAL_RULE})`);
    const invalid = await toolhost('explain', 'delete_path', '{"nope": 1}', '--json');
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout).arguments).toMatchObject({ valid: false, outcome: 'invalid_arguments' });
    expect((await toolhost('explain', 'read_file', '{"path": "README.md"}', '--json')).stdout).toContain('"outcome": "run"');
  });

  it('exits 1 for an unknown tool and 2 for bad usage', async () => {
    const unknown = await toolhost('explain', 'no_such_tool');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown tool "no_such_tool"');
    expect((await toolhost('explain')).code).toBe(2);
    expect((await toolhost('explain', 'read_file', '{not json')).code).toBe(2);
    expect((await toolhost('explain', 'read_file', '[1]')).code).toBe(2);
    expect((await toolhost('explain', '--help')).code).toBe(0);
  });
});
