// mcp-remote (a stdio-to-HTTP bridge many desktop clients use to reach a remote
// MCP server) against `toolhost serve --http` with a bearer token: it lists and
// calls tools, and without the token it gets nothing. Run as a user runs it,
// with the token in a header file (out of the process list) and a HOME of its own.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { startHttpHost, writeTokenFile, type HttpHost } from '../helpers/http-host.js';
import { makeHostDirs, type HostDirs } from '../helpers/host-session.js';

const MCP_REMOTE = join(REPO_ROOT, 'node_modules/mcp-remote/dist/proxy.js');

let dirs: HostDirs;
let host: HttpHost;
let token: string;

beforeAll(async () => {
  await ensureBuilt();
  dirs = makeHostDirs();
  const tokens = writeTokenFile(dirs, ['desktop']);
  token = tokens.tokens['desktop']!;
  host = await startHttpHost(dirs, ['--auth-tokens', tokens.file]);
}, 300_000);
afterAll(async () => {
  await host?.stop();
  dirs.cleanup();
}, 60_000);

/** An SDK client speaking stdio to mcp-remote, which speaks Streamable HTTP to the host. */
async function connectThroughMcpRemote(headerLine: string): Promise<{ client: Client; stderr: () => string }> {
  const home = join(dirs.root, `home-${Math.random().toString(36).slice(2)}`);
  mkdirSync(home);
  const headerFile = join(home, 'headers.txt');
  writeFileSync(headerFile, `${headerLine}\n`, { mode: 0o600 });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, host.url, '--header-file', headerFile, '--transport', 'http-only'],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'mcp-remote-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe('mcp-remote against serve --http', () => {
  it('lists and calls tools with the bearer token', async () => {
    const { client } = await connectThroughMcpRemote(`Authorization: Bearer ${token}`);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('echo');
      const result = await client.callTool({ name: 'echo', arguments: { text: 'through mcp-remote' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ echo: { text: 'through mcp-remote' } });
    } finally {
      await client.close();
    }
  }, 120_000);

  it('gets nothing with a wrong token', async () => {
    const connecting = connectThroughMcpRemote('Authorization: Bearer not-the-token').then(async ({ client }) => {
      try {
        return await client.listTools();
      } finally {
        await client.close();
      }
    });
    await expect(connecting).rejects.toBeDefined();
  }, 120_000);
});
