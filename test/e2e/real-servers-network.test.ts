// Real MCP servers that reach the network with ordinary clients, through the
// built `toolhost serve` and an SDK client over real pipes: the reference
// PostgreSQL server (@modelcontextprotocol/server-postgres, node-postgres
// over TCP, no proxy support) against the test PostgreSQL through the
// allowlist, and a small server written with fastmcp whose tool uses Node's
// global fetch (which ignores HTTP_PROXY; its parser is WebAssembly) against
// an allowed loopback HTTP server, in a small memoryMb. Each connection is
// counted on the call's journal record; a destination the host refuses (a name
// for loopback, here `localhost` on another port) is counted as refused there,
// and a port nothing allows is not reached at all.
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from '../helpers/mcp-clients.js';
import { createTestDatabase, postgresUnavailable, testCluster, type TestDatabase } from '../helpers/postgres.js';
import { makeHostDirs, startClient, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf, wireTextOf } from '../helpers/wire-results.js';

const FIXTURES = join(REPO_ROOT, 'test/e2e/fixtures/network');

/** The journal's records of `tool`, as `toolhost audit --json` prints them. */
async function journalOf(dirs: HostDirs, tool: string): Promise<Array<{ status: string; code: string | null; egress: { admitted: number; refused: number } | null }>> {
  const { stdout } = await execa(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'audit', '--state', dirs.stateDir, '--tool', tool, '--json'], { cwd: REPO_ROOT });
  return JSON.parse(stdout) as Array<{ status: string; code: string | null; egress: { admitted: number; refused: number } | null }>;
}

describe.skipIf(postgresUnavailable !== undefined)('real servers reach allowed destinations with ordinary clients', () => {
  let dirs: HostDirs;
  let client: HostClient;
  let database: TestDatabase;
  let web: Server;
  let webPort = 0;
  let unusedPort = 0;
  let manifests = '';

  beforeAll(async () => {
    await ensureBuilt();
    const cluster = testCluster;
    if (cluster === undefined) throw new Error('no test PostgreSQL');
    database = await createTestDatabase();
    await database.sql('CREATE TABLE items (name text)');
    await database.sql("INSERT INTO items VALUES ('reached over TCP')");
    await database.sql(`GRANT SELECT ON items TO ${cluster.passwordUser}`);
    web = createServer((request, response) => response.end(`hello from ${request.url ?? ''}`));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    webPort = (web.address() as AddressInfo).port;
    // A port nothing listens on: the one a closed server just had.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    unusedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const url = (host: string, port: number) => `postgresql://${cluster.passwordUser}:${cluster.password}@${host}:${port}/${database.name}`;
    const allowed = [`127.0.0.1:${cluster.port}`, `localhost:${unusedPort}`, `127.0.0.1:${webPort}`];
    manifests = mkdtempSync(join(tmpdir(), 'toolhost-e2e-network-'));
    dirs = makeHostDirs({ manifests: [manifests], policy: `kind: Policy\nname: e2e_network\nnetwork:\n  allow: ${JSON.stringify(allowed)}\n` });
    for (const file of ['postgres.mjs', 'fetching-server.mjs']) copyFileSync(join(FIXTURES, file), join(manifests, file));
    // The packages are found where the servers look for them (bound read-only into their sandboxes).
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(manifests, 'node_modules'));
    const server = (name: string, command: string[], allow: string[], tools: string, memoryMb = 256) =>
      [
        'kind: Server',
        `name: ${name}`,
        `description: ${name} for the network e2e test.`,
        `command: ${JSON.stringify(command)}`,
        'sandbox:',
        `  memoryMb: ${memoryMb}`,
        '  startupTimeoutMs: 60000',
        'network:',
        `  allow: ${JSON.stringify(allow)}`,
        'timeoutMs: 30000',
        'tools:',
        tools,
        '',
      ].join('\n');
    writeFileSync(
      join(manifests, 'pg.yaml'),
      server('pg', ['node', './postgres.mjs', url('127.0.0.1', cluster.port)], [`127.0.0.1:${cluster.port}`], '  query: { sideEffect: read_only }'),
    );
    // The same database asked for on another port, by a name the host resolves to loopback: refused there.
    writeFileSync(
      join(manifests, 'pgother.yaml'),
      server('pgother', ['node', './postgres.mjs', url('localhost', unusedPort)], [`localhost:${unusedPort}`], '  query: { sideEffect: read_only }'),
    );
    writeFileSync(join(manifests, 'web.yaml'), server('web', ['node', './fetching-server.mjs'], [`127.0.0.1:${webPort}`], '  "*": { sideEffect: read_only }', 160));
    client = await startClient(dirs, { kind: 'v2-legacy' });
  }, 300_000);

  afterAll(async () => {
    await stopClient(client, dirs);
    web.closeAllConnections();
    await new Promise((resolve) => web.close(resolve));
    await database.drop();
    dirs.cleanup();
    rmSync(manifests, { recursive: true, force: true });
  }, 180_000);

  it('server-postgres runs a query against the test PostgreSQL over TCP, and the connection is on the call record', async () => {
    const result = await client.callTool({ name: 'pg__query', arguments: { sql: 'SELECT name FROM items' } });
    expect(result['isError']).toBeFalsy();
    expect(JSON.parse(wireTextOf(result))).toEqual([{ name: 'reached over TCP' }]);
    const [record] = await journalOf(dirs, 'pg__query');
    expect(record).toMatchObject({ status: 'completed', egress: { admitted: 1, refused: 0 } });
  });

  it('server-postgres asking for another port through a name the host resolves to loopback is refused, and the refusal is on the call record', async () => {
    const result = await client.callTool({ name: 'pgother__query', arguments: { sql: 'SELECT 1' } });
    // server-postgres answers a failed connection with a JSON-RPC error: a tool_error carrying its
    // message, never an invalid_output that hides the cause from the model.
    const error = wireErrorOf(result);
    expect(error.code, JSON.stringify(error)).toBe('tool_error');
    const text = (result['content'] as Array<{ text?: string }>).map((block) => block.text ?? '').join('\n');
    expect(text, text).toMatch(/ECONNREFUSED|connect/i);
    const [record] = await journalOf(dirs, 'pgother__query');
    expect(record?.egress?.admitted).toBe(0);
    expect(record?.egress?.refused).toBeGreaterThanOrEqual(1);
  });

  it("a fastmcp server's global fetch reaches the allowed loopback HTTP server in 160 MiB, counted on the call record; another port is not reached", async () => {
    const result = await client.callTool({ name: 'web__fetch_text', arguments: { url: `http://127.0.0.1:${webPort}/hello` } });
    expect(wireTextOf(result)).toBe('200 hello from /hello');
    const [record] = await journalOf(dirs, 'web__fetch_text');
    expect(record).toMatchObject({ status: 'completed', egress: { admitted: 1, refused: 0 } });
    // A port the allow list does not name has nothing listening in the sandbox: the fetch fails there.
    const other = await client.callTool({ name: 'web__fetch_text', arguments: { url: `http://127.0.0.1:${unusedPort}/` } });
    expect(other['isError']).toBe(true);
    // The server kept its state between calls: one fetch succeeded.
    expect(wireTextOf(await client.callTool({ name: 'web__fetched', arguments: {} }))).toBe('1');
  });
});
