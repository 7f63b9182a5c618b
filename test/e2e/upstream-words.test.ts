// What upstream servers say, through the built `toolhost serve` and real SDK
// clients (SPEC sections 2.1 and 5 step 9): a hostile server that repeats a
// host secret and host paths everywhere its words reach the caller (listing,
// links, embedded resources, resources/read of every text MIME type, MCP Apps
// resources, JSON-RPC errors), a server whose connection is refused, an MCP Apps server written with the SDK (its
// tool's _meta listed, its ui:// resources read through the host), and a
// server that keeps state in memory under instances: one and split.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, connectStdioClient, ensureBuilt, type ClientKind } from '../helpers/mcp-clients.js';
import { MARKER_ENV, makeHostDirs, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf, wireTextOf } from '../helpers/wire-results.js';

beforeAll(() => ensureBuilt(), 300_000);

// Letters and digits only, so a tool name can hold it; a *_TOKEN variable of the host's holds it too.
const SECRET = 'Hunter2LeakSecret9';
const FIXTURES = ['upstream-leaky', 'upstream-apps', 'upstream-state', 'upstream-netfail'].map((folder) => join(REPO_ROOT, 'test/fixtures', folder));

/** Nothing the caller got holds the secret (in any case) or names a host path the server invented. */
function expectClean(value: unknown): void {
  const shown = JSON.stringify(value);
  expect(shown.toLowerCase()).not.toContain(SECRET.toLowerCase());
  expect(shown).not.toContain('/root/.ssh');
  expect(shown).not.toContain('/etc/passwd');
  expect(shown).not.toContain('/etc/hostname');
}

describe.each<ClientKind>(['v1-legacy', 'v2-modern'])('%s client: what servers say reaches it redacted', (kind) => {
  let dirs: HostDirs;
  let client: HostClient;

  beforeAll(async () => {
    dirs = makeHostDirs({ manifests: FIXTURES, policy: 'kind: Policy\nname: words\n' });
    writeFileSync(join(dirs.workspace, 'leak.txt'), `${SECRET}\n`);
    client = await connectStdioClient({ args: dirs.args, env: { [MARKER_ENV]: dirs.marker, UPSTREAM_API_TOKEN: SECRET } }, { kind });
  }, 180_000);
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  }, 180_000);

  it('tools/list: names, titles, descriptions, schemas and _meta are redacted; a name holding the secret is not offered', async () => {
    const { tools } = await client.listTools();
    const leaky = tools.filter((tool) => String(tool['name']).startsWith('leaky__'));
    expect(leaky.map((tool) => tool['name']).sort()).toEqual(['leaky__describe', 'leaky__fail_rpc', 'leaky__links']);
    expectClean(leaky);
    const describeTool = leaky.find((tool) => tool['name'] === 'leaky__describe');
    expect(describeTool).toMatchObject({
      title: 'Title [redacted]',
      description: 'uses [redacted] with [path]',
      inputSchema: {
        description: 'uses [redacted] with [path]',
        properties: { q: { default: 'uses [redacted] with [path]', examples: ['uses [redacted] with [path]'] }, '[redacted]': { type: 'string' } },
      },
      _meta: { note: 'uses [redacted] with [path]', ui: { resourceUri: 'ui://leaky/view.html' } },
    });
    // The server cannot claim the host's own marks.
    expect(describeTool?.['_meta']).not.toHaveProperty('toolhost/terminal');
  });

  it('resource links: name, description and MIME type redacted; a URI with the secret or a host file shown opaque, and still readable', async () => {
    const result = await client.callTool({ name: 'leaky__links', arguments: {} });
    expect(result['isError']).toBeFalsy();
    const blocks = result['content'] as Array<Record<string, any>>;
    expectClean(blocks);
    const [secretLink, fileLink, ...rest] = blocks;
    expect(secretLink).toMatchObject({
      type: 'resource_link',
      uri: expect.stringMatching(/^toolhost:\/\/upstream\/leaky\/[0-9a-f]{32}$/),
      name: 'doc [redacted]',
      mimeType: 'text/[redacted]',
      description: 'uses [redacted] with [path]',
    });
    expect(fileLink).toMatchObject({ type: 'resource_link', uri: expect.stringMatching(/^toolhost:\/\/upstream\/leaky\//), name: 'passwd' });
    expect(rest.slice(0, 4).map((block) => block['uri'])).toEqual(['leaky://doc/plain', 'leaky://doc/xml', 'leaky://doc/json', 'leaky://doc/atom']);
    expect(rest[4]).toMatchObject({ type: 'resource', resource: { uri: expect.stringMatching(/^toolhost:\/\/upstream\/leaky\//), text: 'uses [redacted] with [path]' } });
    // The opaque URI is forwarded as the server's own (it answers with the URI it was asked for).
    const read = await client.readResource(String(secretLink?.['uri']));
    expect(read.contents[0]).toMatchObject({ mimeType: 'text/plain', text: '<doc uri="leaky://doc/[redacted]">uses [redacted] with [path]</doc>' });
    expectClean(read);
    const file = await client.readResource(String(fileLink?.['uri']));
    expect(file.contents[0]?.['text']).toBe('<doc uri="file://[path]">uses [redacted] with [path]</doc>');
  });

  it.each([
    ['leaky://doc/plain', 'Text/Plain'],
    ['leaky://doc/xml', 'application/xml'],
    ['leaky://doc/json', 'APPLICATION/JSON'],
    ['leaky://doc/atom', 'application/atom+xml'],
  ])('resources/read of %s (%s) is redacted as text', async (uri, mimeType) => {
    await client.callTool({ name: 'leaky__links', arguments: {} });
    const read = await client.readResource(uri);
    expect(read.contents[0]).toMatchObject({ mimeType, text: `<doc uri="${uri}">uses [redacted] with [path]</doc>` });
  });

  it('an MCP Apps ui:// resource the server lists is read through the host, redacted; a URI no server returned is not forwarded', async () => {
    const read = await client.readResource('ui://leaky/view.html');
    expect(read.contents[0]).toMatchObject({ mimeType: 'text/html;profile=mcp-app', text: '<doc uri="ui://leaky/view.html">uses [redacted] with [path]</doc>' });
    await expect(client.readResource('leaky://doc/never-linked')).rejects.toThrow();
  });

  it("a JSON-RPC error is tool_error whose model-visible text carries the server's message, redacted", async () => {
    const result = await client.callTool({ name: 'leaky__fail_rpc', arguments: {} });
    expect(wireErrorOf(result)).toMatchObject({ code: 'tool_error', upstreamError: true, jsonRpcCode: -32603, recovery: 'repair' });
    expect(wireTextOf(result)).toContain('connect ECONNREFUSED 10.0.0.7:5432 (uses [redacted] with [path])');
    expectClean(result);
  });

  it('a server whose connection was refused (no network) is tool_error naming the cause, not invalid_output', async () => {
    const result = await client.callTool({ name: 'netfail__query', arguments: { sql: 'select 1' } });
    expect(wireErrorOf(result)).toMatchObject({ code: 'tool_error', upstreamError: true, recovery: 'repair' });
    expect(wireTextOf(result)).toMatch(/^code: tool_error\n.*connect ECONNREFUSED 127\.0\.0\.1:9/m);
  });

  it("MCP Apps (SDK server): the tool's _meta.ui.resourceUri is listed as given and its ui:// resources are read from that server", async () => {
    const { tools } = await client.listTools();
    const chart = tools.find((tool) => tool['name'] === 'apps__show_chart');
    expect(chart).toMatchObject({ title: 'Show a chart', _meta: { ui: { resourceUri: 'ui://charts/chart.html', prefersBorder: true } } });
    const page = await client.readResource('ui://charts/chart.html');
    expect(page.contents[0]).toMatchObject({ uri: 'ui://charts/chart.html', mimeType: 'text/html;profile=mcp-app', text: expect.stringContaining('<div id="chart">') });
    // Listed by the server, named by no tool: found among the running servers' resources.
    const legend = await client.readResource('ui://charts/legend.html');
    expect(legend.contents[0]?.['text']).toContain('<title>legend</title>');
    expect(wireTextOf(await client.callTool({ name: 'apps__show_chart', arguments: { values: [1, 2] } }))).toBe('chart of [1,2]');
  });

  it('instances: one keeps what a server holds in memory between a mutating and a read_only tool', async () => {
    expect(wireTextOf(await client.callTool({ name: 'varsone__set_var', arguments: { name: `k_${kind}`, value: 'kept' } }))).toMatch(/^set k_/);
    const got = await client.callTool({ name: 'varsone__get_var', arguments: { name: `k_${kind}` } });
    expect(got['isError']).toBeFalsy();
    expect(wireTextOf(got)).toBe('kept');
  });

  it('instances: split serves the read_only tool from an instance of its own, which does not share that memory', async () => {
    expect(wireTextOf(await client.callTool({ name: 'varssplit__set_var', arguments: { name: `k_${kind}`, value: 'lost' } }))).toMatch(/^set k_/);
    const got = await client.callTool({ name: 'varssplit__get_var', arguments: { name: `k_${kind}` } });
    expect(wireErrorOf(got)).toMatchObject({ code: 'tool_error' });
    expect(wireTextOf(got)).toContain(`no variable k_${kind}`);
  });
});
