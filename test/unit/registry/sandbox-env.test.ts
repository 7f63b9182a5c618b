// `sandbox.env` as a list or a map (SPEC sections 2 and 2.1): a literal is set
// as written with ${WORKSPACE} expanded and never reads the host; null passes
// the host's value under the policy as the list form does; a literal for a
// secret name is refused at load with file:line:col, and so is one that would
// override the host's egress variables.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadHostConfig } from '../../../src/host-config.js';
import { makeWorkspace, type TestWorkspace } from '../../helpers/policy-workspace.js';

const PROCESS_TOOL = (env: string): string => `name: envy
description: A process tool with an environment.
sideEffect: read_only
timeoutMs: 1000
sandbox:
  mode: process
  command: ["python3", "./tool.py"]
  isolation: namespace
  env: ${env}
input: { type: object }
`;

const SERVER = (env: string, policyTools = '  "*": { sideEffect: read_only }'): string => `kind: Server
name: mem
description: A server with an environment.
command: ["node", "./server.mjs"]
sandbox:
  env: ${env}
workspace:
  roots: [{ path: "\${WORKSPACE}", access: read_write }]
timeoutMs: 1000
tools:
${policyTools}
`;

let workspace: TestWorkspace | undefined;
afterEach(() => workspace?.cleanup());

function loadWith(manifests: Record<string, string>, env: NodeJS.ProcessEnv, organisation?: string) {
  workspace = makeWorkspace({
    manifests,
    files: { 'manifests/tool.py': 'print(1)\n', 'manifests/server.mjs': '' },
    ...(organisation ? { organisation: { 'org.yaml': organisation } } : {}),
  });
  const ws = workspace;
  return loadHostConfig({ manifestDirs: [join(ws.dir, 'manifests')], policyFiles: ws.orgFiles, workspace: ws.dir, cwd: ws.dir, env });
}

describe('sandbox.env of a tool manifest', () => {
  it('a map sets literals (${WORKSPACE} expanded) and passes null names from the host, under env.allow', () => {
    const config = loadWith(
      { 'envy.yaml': PROCESS_TOOL('{ DATA_FILE: "${WORKSPACE}/data.jsonl", GREETING: "hello", LANG: null, HOME: null }') },
      { LANG: 'C.UTF-8', HOME: '/root', GREETING: 'from the host' },
    );
    expect(config.problems).toEqual([]);
    const view = config.tools.get('envy');
    // HOME is not in the built-in env.allow: the tool is excluded, as with the list form.
    expect(view?.exclusion?.rule).toMatch(/env\.allow/);
    const allowed = loadWith(
      { 'envy.yaml': PROCESS_TOOL('{ DATA_FILE: "${WORKSPACE}/data.jsonl", GREETING: "hello", LANG: null }') },
      { LANG: 'C.UTF-8', GREETING: 'from the host' },
    );
    expect(allowed.problems).toEqual([]);
    // The literal is the manifest's word, not the host's value of the same name.
    expect(allowed.tools.get('envy')?.runSpec?.env).toEqual({ DATA_FILE: join(workspace!.dir, 'data.jsonl'), GREETING: 'hello', LANG: 'C.UTF-8' });
  });

  it('the list form is unchanged', () => {
    const config = loadWith({ 'envy.yaml': PROCESS_TOOL('[LANG, TZ]') }, { LANG: 'C.UTF-8', TZ: 'UTC', OTHER: 'x' });
    expect(config.problems).toEqual([]);
    expect(config.tools.get('envy')?.runSpec?.env).toEqual({ LANG: 'C.UTF-8', TZ: 'UTC' });
  });

  it('refuses a literal for a name matching env.secrets at load, with file:line:col, however the name is written', () => {
    const config = loadWith({ 'envy.yaml': PROCESS_TOOL('{ LANG: null, Api_Token: "ghp_not_a_real_token" }') }, {});
    expect(config.problems).toEqual([
      { file: 'manifests/envy.yaml', line: 9, col: 22, reason: expect.stringContaining('env Api_Token matches the secret name "*_TOKEN" (env.secrets)') },
    ]);
  });

  it('refuses a literal for a secret name the organisation adds', () => {
    const config = loadWith({ 'envy.yaml': PROCESS_TOOL('{ DB_URL: "postgres://u:p@db/x" }') }, {}, 'kind: Policy\nname: org\nenv:\n  secrets: ["DB_URL"]\n');
    expect(config.problems).toEqual([expect.objectContaining({ file: 'manifests/envy.yaml', line: 9, reason: expect.stringContaining('"DB_URL" (env.secrets)') })]);
  });

  it('refuses a literal for a variable the host sets for the egress proxy', () => {
    const config = loadWith({ 'envy.yaml': PROCESS_TOOL('{ https_proxy: "http://evil.example:8080" }') }, {});
    expect(config.problems).toEqual([expect.objectContaining({ file: 'manifests/envy.yaml', line: 9, col: 10, reason: expect.stringContaining('set by the host') })]);
  });

  it('refuses a value that is neither a string nor null, and a bad name, at the schema', () => {
    const config = loadWith({ 'envy.yaml': PROCESS_TOOL('{ COUNT: 3, "1BAD": "x" }') }, {});
    expect(config.problems).toEqual([
      { file: 'manifests/envy.yaml', line: 9, col: 17, reason: 'sandbox.env.COUNT must be of type string,null (got 3)' },
      {
        file: 'manifests/envy.yaml',
        line: 9,
        col: 20,
        reason: 'key "1BAD" of sandbox.env must be an environment variable name (letters, digits, underscores; not starting with a digit)',
      },
    ]);
  });
});

describe('sandbox.env of a server manifest', () => {
  it('reaches every tool of the server with its literals', () => {
    const listing = { ok: true as const, truncated: false, tools: [{ name: 'read_graph', inputSchema: { type: 'object' } }] };
    workspace = makeWorkspace({ manifests: { 'mem.yaml': SERVER('{ MEMORY_FILE_PATH: "${WORKSPACE}/.memory.jsonl", LANG: null }') }, files: { 'manifests/server.mjs': '' } });
    const config = loadHostConfig({
      manifestDirs: [join(workspace.dir, 'manifests')],
      policyFiles: [],
      workspace: workspace.dir,
      cwd: workspace.dir,
      env: { LANG: 'C' },
      serverListings: new Map([['mem', listing]]),
    });
    expect(config.problems).toEqual([]);
    expect(config.tools.get('mem__read_graph')?.runSpec?.env).toEqual({ MEMORY_FILE_PATH: join(workspace.dir, '.memory.jsonl'), LANG: 'C' });
    // The probe that lists the server starts it with the same environment.
    expect(config.serverProbes.get('mem')?.env).toEqual({ MEMORY_FILE_PATH: join(workspace.dir, '.memory.jsonl'), LANG: 'C' });
  });

  it('refuses a secret literal in a server manifest at load', () => {
    const config = loadWith({ 'mem.yaml': SERVER('{ OPENAI_API_KEY: "sk-written-in-the-file" }') }, {});
    expect(config.problems).toEqual([expect.objectContaining({ file: 'manifests/mem.yaml', line: 6, col: 10, reason: expect.stringContaining('"*_KEY" (env.secrets)') })]);
  });
});
