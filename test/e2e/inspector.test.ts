// The official MCP Inspector CLI (@modelcontextprotocol/inspector 0.15.0,
// the last release whose CLI runs on Node 20) lists and calls the bundled
// tools through `toolhost serve`, configured the way an MCP client is: a
// JSON file naming the command, exactly as docs/clients.md shows.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { waitForNoMarkedProcesses } from '../helpers/proc-scan.js';
import { MARKER_ENV, makeHostDirs, type HostDirs } from '../helpers/host-session.js';

const INSPECTOR_CLI = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/inspector/cli/build/cli.js');

let dirs: HostDirs;
let configFile: string;

beforeAll(async () => {
  await ensureBuilt();
  dirs = makeHostDirs();
  mkdirSync(join(dirs.workspace, 'docs'));
  writeFileSync(join(dirs.workspace, 'docs/intro.md'), '# Intro\nThe inspector read this.\n');
  configFile = join(dirs.root, 'mcp.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      mcpServers: {
        toolhost: {
          command: process.execPath,
          args: [join(REPO_ROOT, 'bin/toolhost.js'), 'serve', '--manifests', join(REPO_ROOT, 'manifests'), '--workspace', dirs.workspace, '--state', dirs.stateDir],
          env: { [MARKER_ENV]: dirs.marker, PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
        },
      },
    }),
  );
}, 300_000);

afterAll(async () => {
  dirs.cleanup();
});

/** Runs the Inspector CLI once; resolves with its exit code and parsed stdout. */
function inspect(...args: string[]): Promise<{ code: number | null; json: Record<string, unknown>; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [INSPECTOR_CLI, '--cli', '--config', configFile, '--server', 'toolhost', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    // 'close', not 'exit': the last stdout bytes may still be unread when the process exits.
    child.on('close', (code) => {
      try {
        resolve({ code, json: JSON.parse(stdout) as Record<string, unknown>, stderr });
      } catch {
        reject(new Error(`inspector printed no JSON (exit ${code}):\n${stdout}\n${stderr}`));
      }
    });
  });
}

describe('MCP Inspector CLI', () => {
  it('lists the bundled tools with their annotations', async () => {
    const { code, json } = await inspect('--method', 'tools/list');
    expect(code).toBe(0);
    const tools = json['tools'] as Array<{ name: string; annotations: Record<string, boolean> }>;
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['list_dir', 'read_file', 'search_text']));
    expect(tools.find((tool) => tool.name === 'read_file')!.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
  });

  it('calls read_file on the workspace', async () => {
    const { code, json } = await inspect('--method', 'tools/call', '--tool-name', 'read_file', '--tool-arg', 'path=docs/intro.md');
    expect(code).toBe(0);
    expect(json['isError']).toBeFalsy();
    expect(json['structuredContent']).toMatchObject({ path: 'docs/intro.md', text: '# Intro\nThe inspector read this.', totalLines: 2 });
    expect(await waitForNoMarkedProcesses(dirs.marker)).toEqual([]);
  });

  it('sees a refusal as an error result with its code', async () => {
    const { code, json } = await inspect('--method', 'tools/call', '--tool-name', 'read_file', '--tool-arg', 'path=../outside.txt');
    expect(code).toBe(0);
    expect(json['isError']).toBe(true);
    // The sandbox refused the path (policy_denied inside the tool), which the tool did not catch: tool_error.
    const meta = json['_meta'] as Record<string, { code: string; errorCode?: string }>;
    expect(meta['toolhost/error']).toMatchObject({ code: 'tool_error', errorCode: 'policy_denied' });
    expect((json['content'] as Array<{ text: string }>)[0]!.text.startsWith('code: tool_error')).toBe(true);
  });
});
