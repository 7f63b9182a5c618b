// The first hour, as a newcomer lives it: `toolhost init` in an empty folder,
// then validate, list, a call of each scaffolded tool and `serve` with a real
// SDK client, every command reading toolhost.yaml alone (no flags), from the
// project and from a folder below it; then `new tool` for each mode.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, connectStdioClient, ensureBuilt } from '../helpers/mcp-clients.js';

let root: string;
let project: string;

function toolhost(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, ...args], { cwd, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(async () => {
  await ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'toolhost-init-'));
  project = join(root, 'project');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('toolhost init, then every command from toolhost.yaml alone', () => {
  it('writes a project into an empty folder', () => {
    const init = toolhost(root, 'init', 'project');
    expect(init.status, init.stderr).toBe(0);
    for (const file of [
      'toolhost.yaml',
      'manifests/greet.yaml',
      'manifests/greet.js',
      'manifests/word_count.yaml',
      'manifests/word_count.py',
      'policies/repository.yaml',
      '.mcp.json',
    ]) {
      expect(init.stdout).toContain(file);
    }
  });

  it('validates and lists both tools, from the project and from a folder below it', () => {
    mkdirSync(join(project, 'src', 'deep'), { recursive: true });
    for (const cwd of [project, join(project, 'src', 'deep')]) {
      const validate = toolhost(cwd, 'validate');
      expect(validate.status, validate.stderr).toBe(0);
      const list = toolhost(cwd, 'list', '--json');
      expect(list.status, list.stderr).toBe(0);
      const tools = JSON.parse(list.stdout) as Array<{ name: string; mode: string; isolation: string | null; listed: boolean; decision: string; file: string }>;
      expect(tools.map(({ name, mode, isolation, listed, decision, file }) => ({ name, mode, isolation, listed, decision, file }))).toEqual([
        { name: 'greet', mode: 'isolate', isolation: null, listed: true, decision: 'allow', file: 'manifests/greet.yaml' },
        { name: 'word_count', mode: 'process', isolation: 'namespace', listed: true, decision: 'allow', file: 'manifests/word_count.yaml' },
      ]);
    }
  });

  it('calls the isolate tool and the process tool, journaled in the project state folder', () => {
    const below = join(project, 'src', 'deep');
    const greet = toolhost(below, 'call', 'greet', '{"name":"Ada"}');
    expect(greet.status, greet.stderr).toBe(0);
    expect(JSON.parse(greet.stdout)).toMatchObject({ structuredContent: { greeting: 'Hello, Ada!' } });
    const count = toolhost(below, 'call', 'word_count', '{"text":"one two\\nthree"}');
    expect(count.status, count.stderr).toBe(0);
    expect(JSON.parse(count.stdout)).toMatchObject({ structuredContent: { words: 3, lines: 2, chars: 13 } });
    // The journal is the project's (toolhost.yaml's state), not one beside the working directory.
    const audit = toolhost(root, 'audit', '--json', '--config', join(project, 'toolhost.yaml'));
    expect(audit.status, audit.stderr).toBe(0);
    expect((JSON.parse(audit.stdout) as Array<{ tool: string; status: string }>).map((record) => [record.tool, record.status]).sort()).toEqual([
      ['greet', 'completed'],
      ['word_count', 'completed'],
    ]);
  });

  it('serves both tools to an SDK client started with no flags', async () => {
    const client = await connectStdioClient({ args: [], cwd: project }, { kind: 'v2-legacy' });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['greet', 'word_count']);
      const result = await client.callTool({ name: 'word_count', arguments: { text: 'a b' } });
      expect(result).toMatchObject({ structuredContent: { words: 2 } });
    } finally {
      await client.close();
    }
  });

  it('serves through the command .mcp.json names, from any working directory', async () => {
    const launch = (JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8')) as { mcpServers: { toolhost: { command: string; args: string[] } } }).mcpServers.toolhost;
    const client = new Client({ name: 'init-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: launch.command, args: launch.args, cwd: tmpdir(), stderr: 'pipe' }));
    try {
      const result = await client.callTool({ name: 'greet', arguments: { name: 'Grace' } });
      expect(result).toMatchObject({ structuredContent: { greeting: 'Hello, Grace!' } });
    } finally {
      await client.close();
    }
  });

  it('refuses to overwrite anything, writing nothing', () => {
    writeFileSync(join(root, 'partial.txt'), 'x');
    mkdirSync(join(root, 'partial'));
    writeFileSync(join(root, 'partial', '.mcp.json'), '{}');
    const again = toolhost(root, 'init', 'partial');
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('.mcp.json');
    expect(spawnSync('ls', ['-A', join(root, 'partial')], { encoding: 'utf8' }).stdout.trim()).toBe('.mcp.json');
    expect(toolhost(root, 'init', 'project').status).toBe(1);
  });

  it('adds a tool of each mode that passes validate (a worker once an organisation policy makes it first party)', () => {
    for (const mode of ['isolate', 'process']) {
      const made = toolhost(project, 'new', 'tool', `my_${mode}`, '--mode', mode);
      expect(made.status, made.stderr).toBe(0);
    }
    const validate = toolhost(project, 'validate');
    expect(validate.status, validate.stderr).toBe(0);
    const call = toolhost(project, 'call', 'my_process', '{"text":"x y"}');
    expect(JSON.parse(call.stdout)).toMatchObject({ structuredContent: { words: 2 } });

    const worker = toolhost(project, 'new', 'tool', 'my_worker', '--mode', 'worker');
    expect(worker.status).toBe(0);
    const refused = toolhost(project, 'validate');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('sandbox.community');
    // The policy `new` prints, used as printed, is what lets the worker run.
    const lines = worker.stdout.split('\n');
    const from = lines.findIndex((line) => line.includes('--policy first-party.yaml')) + 1;
    const printed = lines.slice(
      from,
      lines.findIndex((line, at) => at >= from && !line.startsWith('  ')),
    );
    expect(printed.join('\n')).toContain('firstParty: ["manifests/my_worker.yaml"]');
    writeFileSync(join(root, 'org.yaml'), `${printed.map((line) => line.slice(2)).join('\n')}\n`);
    const granted = toolhost(project, 'validate', '--policy', join(root, 'org.yaml'));
    expect(granted.status, granted.stderr).toBe(0);
    const called = toolhost(project, 'call', 'my_worker', '--policy', join(root, 'org.yaml'));
    expect(called.status, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({ structuredContent: { node: process.version } });
    expect(toolhost(project, 'new', 'tool', 'my_isolate', '--mode', 'isolate').status).toBe(1);
  });
});
