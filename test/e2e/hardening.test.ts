// Issue 13 through the real SDK clients over real stdio: a spilled result of a
// tool that advertises an outputSchema is an output_limit error result that
// every client's callTool() reads (no client throws on it), and a __proto__
// key in the arguments is refused before anything runs.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KINDS, ensureBuilt, type ClientKind } from '../helpers/mcp-clients.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { countToolListChanges, makeHostDirs, startClient, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';

const HARDENING = fileURLToPath(new URL('../fixtures/hardening/manifests', import.meta.url));

beforeAll(() => ensureBuilt(), 300_000);

describe.each(CLIENT_KINDS)('%s client', (kind: ClientKind) => {
  let dirs: HostDirs;
  let client: HostClient;

  beforeAll(async () => {
    dirs = makeHostDirs({ manifests: [HARDENING] });
    client = await startClient(dirs, { kind });
  });
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  });

  it('callTool() reads the spilled result of a tool with an outputSchema as an output_limit error with a preview and a resource_link', async () => {
    const result = await client.callTool({ name: 'big_typed', arguments: { bytes: 5000 } });
    expect(result['isError']).toBe(true);
    expect(result['structuredContent']).toBeUndefined();
    const content = result['content'] as Array<Record<string, unknown>>;
    expect(String(content[0]?.['text']).startsWith('code: output_limit\n')).toBe(true);
    const preview = content[1];
    expect(preview?.['type']).toBe('text');
    expect(Buffer.byteLength(String(preview?.['text']))).toBeLessThanOrEqual(1024);
    expect(String(preview?.['text']).startsWith('{"text":"yyy')).toBe(true);
    const link = content.find((block) => block['type'] === 'resource_link');
    const error = (result['_meta'] as Record<string, Record<string, unknown>>)['toolhost/error'];
    expect(error).toMatchObject({ code: 'output_limit', bytes: 5011, limit: 1024, uri: link?.['uri'] });
    const read = await client.readResource(String(link?.['uri']));
    expect(JSON.parse(String(read.contents[0]?.['text']))).toEqual({ text: 'y'.repeat(5000) });
  });

  it('a result within the limit is still a success with structuredContent', async () => {
    const result = await client.callTool({ name: 'big_typed', arguments: { bytes: 10 } });
    expect(result['isError']).toBeFalsy();
    expect(result['structuredContent']).toEqual({ text: 'y'.repeat(10) });
  });

  it('refuses arguments holding a __proto__ key with malformed_request, and runs nothing', async () => {
    const args = JSON.parse('{"bytes":3,"__proto__":{"bytes":"notint"}}') as Record<string, unknown>;
    const refused = await client.callTool({ name: 'big_typed', arguments: args }).then(
      () => undefined,
      (error: unknown) => error as { code?: number; data?: Record<string, unknown> },
    );
    expect(refused?.code).toBe(-32600);
    expect(refused?.data).toMatchObject({ code: 'malformed_request', reason: 'proto_key', key: '/params/arguments/__proto__' });
  });
});

// The reload a tool call used to trigger: bubblewrap made a mount point for the missing
// policies/ through the read_write bind, the watcher saw it appear and reloaded, and
// the reload's fresh supervisor let a fourth call through maxCallsPerSession: 3.
describe('a reload triggered by a tool call', () => {
  let dirs: HostDirs;
  let client: HostClient;

  beforeAll(async () => {
    dirs = makeHostDirs({ manifests: [HARDENING], policy: 'kind: Policy\nname: e2e\nlimits:\n  maxCallsPerSession: 3\n' });
    client = await startClient(dirs, { kind: 'v2-legacy' });
  });
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  });

  it('never happens: a namespaced read_write tool creates nothing on the host, and the session budget holds', async () => {
    const changes = await countToolListChanges(client);
    for (let call = 1; call <= 3; call++) expect((await client.callTool({ name: 'py_version', arguments: {} }))['isError']).toBeFalsy();
    expect(existsSync(join(dirs.workspace, 'policies'))).toBe(false);
    const fourth = await client.callTool({ name: 'py_version', arguments: {} });
    expect(fourth['isError']).toBe(true);
    expect((fourth['_meta'] as Record<string, Record<string, unknown>>)['toolhost/error']?.['code']).toBe('call_limit');
    expect(changes()).toBe(0);
  });
});
