// Trust layering (SPEC 4), as a careless repository meets it: a repository
// policy that writes `trust: {firstParty: ["**"]}`, under an organisation
// policy that does not set the key, cannot make a community worker tool first
// party. A worker runs in the host process with all of Node, so the tool here
// tries what such a tool would: read /etc/shadow. It is not listed, a call is
// refused before anything of it runs, `validate` exits 1 and warns that the
// repository key has no effect, and `explain` marks the built-in value in force
// and the repository row it overrode.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, connectStdioClient, ensureBuilt } from '../helpers/mcp-clients.js';
import { E2E_POLICY, MARKER_ENV, stopClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

const REPOSITORY_POLICY = `kind: Policy
name: open-everything
trust:
  firstParty: ["**"]
`;

const READER = `name: shadow_reader
description: Reads a file of the host with Node's fs (a worker tool has all of Node).
sideEffect: read_only
timeoutMs: 5000
sandbox:
  mode: worker
  memoryMb: 64
entry: ./shadow_reader.mjs
input:
  type: object
  additionalProperties: false
  properties: {}
`;

const READER_SOURCE = `import { readFileSync } from 'node:fs';
export default async function shadowReader() {
  return { shadow: readFileSync('/etc/shadow', 'utf8') };
}
`;

let dirs: HostDirs;

beforeAll(async () => {
  await ensureBuilt();
  const root = mkdtempSync(join(tmpdir(), 'toolhost-trust-'));
  const workspace = join(root, 'workspace');
  const tools = join(workspace, 'tools');
  mkdirSync(join(workspace, 'policies'), { recursive: true });
  mkdirSync(tools);
  writeFileSync(join(workspace, 'policies', 'open.yaml'), REPOSITORY_POLICY);
  writeFileSync(join(tools, 'shadow_reader.yaml'), READER);
  writeFileSync(join(tools, 'shadow_reader.mjs'), READER_SOURCE);
  const policyFile = join(root, 'org-policy.yaml');
  writeFileSync(policyFile, E2E_POLICY);
  const stateDir = join(root, 'state');
  dirs = {
    root,
    workspace,
    stateDir,
    policyFile,
    marker: `toolhost-trust-${randomUUID()}`,
    args: ['--manifests', tools, '--policy', policyFile, '--workspace', workspace, '--state', stateDir],
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}, 300_000);

afterAll(() => dirs?.cleanup());

function cli(command: string, extra: readonly string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--no-node-snapshot', BUILT_MAIN, command, ...extra, ...dirs.args], { cwd: dirs.workspace, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a repository policy that declares everything first party', () => {
  it('cannot make a community worker tool first party: not listed, refused, /etc/shadow never read', async () => {
    const client = await connectStdioClient({ args: dirs.args, env: { [MARKER_ENV]: dirs.marker } }, { kind: 'v2-legacy' });
    try {
      expect((await client.listTools()).tools.map((tool) => tool['name'])).toEqual([]);
      const result = await client.callTool({ name: 'shadow_reader', arguments: {} });
      expect(wireErrorOf(result)).toMatchObject({ code: 'policy_denied', rule: '(built-in) sandbox.community', recovery: 'stop' });
      expect(JSON.stringify(result)).not.toContain('root:');
    } finally {
      await stopClient(client, dirs);
    }
  });

  it('validate exits 1 for the excluded tool and warns that the repository key has no effect', async () => {
    const { code, stderr } = await cli('validate');
    expect(code).toBe(1);
    const lines = stderr.split('\n');
    expect(lines.filter((line) => line.startsWith('policies/open.yaml:'))).toEqual([
      expect.stringMatching(/^policies\/open\.yaml:4:\d+: warning: trust\.firstParty: \["\*\*"\] has no effect: only an organisation policy/),
    ]);
    expect(lines.some((line) => line.includes('shadow_reader') && line.includes('sandbox.community'))).toBe(true);
  });

  it('explain marks the built-in value in force and the repository row it overrode', async () => {
    const { code, stdout } = await cli('explain', ['shadow_reader', '--json']);
    expect(code).toBe(0);
    const explanation = JSON.parse(stdout) as { trust: string; keys: Array<{ key: string; layer: string; value: unknown; status: string; overriddenBy?: string }> };
    expect(explanation.trust).toBe('community');
    expect(explanation.keys.filter((row) => row.key === 'trust.firstParty').map((row) => [row.layer, row.value, row.status, row.overriddenBy])).toEqual([
      ['built-in', [], 'in_force', undefined],
      ['repository', ['**'], 'overridden', '(built-in) trust.firstParty'],
    ]);
  });
});
