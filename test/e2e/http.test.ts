// `toolhost serve --http` (SPEC section 6.1) with a token file: the built host
// on 127.0.0.1, real SDK clients (v1 StreamableHTTPClientTransport, v2 in both
// eras) with bearer tokens, and hostile requests that must be refused before
// any MCP handling: no token, another file's token, a malformed header, a
// foreign Origin, a rebinding Host, an oversized body, a principal denied a
// tool by policy. Two principals keep separate call budgets; the journal and
// `toolhost audit` name the principal of every call.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, CLIENT_KINDS, connectHttpClient, ensureBuilt, type TestClient } from '../helpers/mcp-clients.js';
import { makeHostDirs, type HostDirs } from '../helpers/host-session.js';
import { get, post, startHttpHost, writeTokenFile, type HttpHost } from '../helpers/http-host.js';
import { wireErrorOf } from '../helpers/wire-results.js';

const POLICY = `kind: Policy
name: http-e2e
tools:
  deny: ["forbidden_*"]
limits:
  maxCallsPerSession: 3
principals:
  "ci-*":
    tools:
      deny: ["echo"]
`;

const MAX_MESSAGE_BYTES = 65_536;
const PRINCIPALS = ['alice', 'bob', 'ci-bot', 'carol', 'dave', ...CLIENT_KINDS];

let dirs: HostDirs;
let host: HttpHost;
let tokens: Record<string, string>;
let strangerToken: string;
const clients: TestClient[] = [];

beforeAll(async () => {
  await ensureBuilt();
  dirs = makeHostDirs({ policy: POLICY, extraArgs: ['--max-message-bytes', String(MAX_MESSAGE_BYTES)] });
  ({ tokens } = writeTokenFile(dirs, PRINCIPALS));
  // A token that is valid somewhere else: in a file this host was not given.
  strangerToken = writeTokenFile(dirs, ['alice'], 'other-tokens.txt').tokens['alice']!;
  host = await startHttpHost(dirs, ['--auth-tokens', `${dirs.root}/tokens.txt`]);
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await host?.stop();
  dirs?.cleanup();
});

async function connect(kind: (typeof CLIENT_KINDS)[number], principal: string, elicit?: Parameters<typeof connectHttpClient>[2]['elicit']): Promise<TestClient> {
  const client = await connectHttpClient(host.url, tokens[principal], { kind, ...(elicit ? { elicit } : {}) });
  clients.push(client);
  return client;
}

describe.each(CLIENT_KINDS)('%s client over HTTP with a token', (kind) => {
  it('lists and calls tools', async () => {
    const client = await connect(kind, kind);
    const names = (await client.listTools()).tools.map((tool) => tool['name']);
    expect(names).toContain('echo');
    expect(names).not.toContain('forbidden_shell');
    const result = await client.callTool({ name: 'echo', arguments: { text: `hi from ${kind}` } });
    expect(result['isError']).not.toBe(true);
    expect(JSON.stringify(result['content'])).toContain(`hi from ${kind}`);
  });
});

describe('approvals over HTTP', () => {
  it.each(['v1-legacy', 'v2-modern'] as const)('%s: the client is asked (elicitation or input_required) and its yes runs the tool', async (kind) => {
    const asked: string[] = [];
    // Each era on its own principal: the call budget of 3 is per principal.
    const client = await connectHttpClient(host.url, tokens[kind === 'v1-legacy' ? 'v2-legacy' : 'alice'], {
      kind,
      elicit: (question) => {
        asked.push(question.message);
        return { action: 'accept', content: { approve: true } };
      },
    });
    clients.push(client);
    const result = await client.callTool({ name: 'note_writer', arguments: { text: 'over http' } });
    expect(result['isError']).not.toBe(true);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('note_writer');
  });
});

describe('operator approvals over HTTP', () => {
  it('a client that cannot be asked gets approval_required, and the pending approval names its principal', async () => {
    const client = await connect('v1-legacy', 'carol');
    const refused = wireErrorOf(await client.callTool({ name: 'note_writer', arguments: { text: 'for an operator' } }));
    expect(refused.code).toBe('approval_required');
    const approvalId = refused['approvalId'];
    expect(typeof approvalId).toBe('string');
    const listed = spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'approvals', '--state', dirs.stateDir, '--json'], { encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    const approvals = JSON.parse(listed.stdout) as Array<{ id: string; principal: string | null; tool: string; state: string }>;
    expect(approvals).toContainEqual(expect.objectContaining({ id: approvalId, principal: 'carol', tool: 'note_writer', state: 'pending' }));
  });
});

describe('refusals before any MCP handling', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });

  it("401 with a challenge for no token, another file's token and a malformed header", async () => {
    for (const authorization of [undefined, `Bearer ${strangerToken}`, 'Basic YWxpY2U6cHc=', 'Bearer', `Bearer ${tokens['alice']} extra`]) {
      const response = await post(host.url, initialize, authorization === undefined ? {} : { authorization });
      expect(response.status, String(authorization)).toBe(401);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="toolhost"/);
      expect(JSON.parse(response.body).error.data.code).toBe('unauthorized');
      expect(response.headers['mcp-session-id']).toBeUndefined();
    }
    const known = await post(host.url, initialize, { authorization: `Bearer ${strangerToken}` });
    expect(known.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('403 for a foreign Origin and for a rebinding Host, even with a good token', async () => {
    const auth = { authorization: `Bearer ${tokens['alice']}` };
    const foreignOrigin = await post(host.url, initialize, { ...auth, origin: 'https://evil.example' });
    expect(foreignOrigin.status).toBe(403);
    expect(JSON.parse(foreignOrigin.body).error.data.code).toBe('forbidden_origin');
    const port = new URL(host.url).port;
    const rebinding = await post(host.url, initialize, { ...auth, host: `attacker.example:${port}` });
    expect(rebinding.status).toBe(403);
    expect(JSON.parse(rebinding.body).error.data.code).toBe('forbidden_host');
    // The loopback names are accepted.
    const fine = await post(host.url, initialize, { ...auth, origin: `http://localhost:${port}` });
    expect(fine.status).toBe(200);
  });

  it('413 for a body over --max-message-bytes, counted as it arrives', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { pad: 'x'.repeat(MAX_MESSAGE_BYTES) } });
    const response = await post(host.url, big, { authorization: `Bearer ${tokens['alice']}` });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).error.data).toMatchObject({ code: 'malformed_request', reason: 'too_large', maxBytes: MAX_MESSAGE_BYTES });
    const chunked = await post(host.url, big, { authorization: `Bearer ${tokens['alice']}` }, { chunked: true });
    expect(chunked.status).toBe(413);
  });

  it('400 with malformed_request for a body the stdio boundary would refuse (duplicate keys)', async () => {
    const response = await post(host.url, '{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}', { authorization: `Bearer ${tokens['alice']}` });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error.data).toMatchObject({ code: 'malformed_request', reason: 'duplicate_key' });
  });

  it('400 with proto_key for a __proto__ key in a body, plain or escaped, as on stdio', async () => {
    const bodies = [
      ['{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","__proto__":{"text":"b"}}}}', 5, '/params/arguments/__proto__'],
      ['{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","\\u005f_proto__":{}}}}', 6, '/params/arguments/__proto__'],
    ] as const;
    for (const [body, id, key] of bodies) {
      const response = await post(host.url, body, { authorization: `Bearer ${tokens['alice']}` });
      expect(response.status, body).toBe(400);
      const answer = JSON.parse(response.body);
      expect(answer.id).toBe(id);
      expect(answer.error.data).toEqual({ code: 'malformed_request', reason: 'proto_key', key, recovery: 'stop' });
    }
  });

  it("400 malformed_request with the id for a body the MCP SDK's message schemas refuse, in both eras; the session serves on", async () => {
    const auth = { authorization: `Bearer ${tokens['dave']}` };
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const call = (id: number, meta: unknown, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: meta }, ...extra });
    const expectRefused = async (body: string, headers: Record<string, string>, id: number | null, key: string) => {
      const response = await post(host.url, body, headers);
      expect(response.status, body).toBe(400);
      const answer = JSON.parse(response.body) as { id: unknown; error: { code: number; data: unknown } };
      expect(answer.id).toBe(id);
      expect(answer.error.code).toBe(-32600);
      expect(answer.error.data).toEqual({ code: 'malformed_request', reason: 'not_mcp_message', key, recovery: 'stop' });
    };
    const modern = { ...auth, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
    await expectRefused(call(11, { ...envelope, progressToken: 1.5 }), modern, 11, '/params/_meta/progressToken');
    await expectRefused(call(12, envelope, { extra: 1 }), modern, 12, '/extra');

    const opened = await post(host.url, initialize, auth);
    const legacy = { ...auth, 'mcp-session-id': String(opened.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' };
    expect((await post(host.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), legacy)).status).toBe(202);
    await expectRefused(call(13, null), legacy, 13, '/params/_meta');
    await expectRefused(call(14, { progressToken: true }), legacy, 14, '/params/_meta/progressToken');
    // A notification: the POST gets its 400, addressed to no id.
    await expectRefused(
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: { progressToken: {} } } }),
      legacy,
      null,
      '/params/_meta/progressToken',
    );
    const served = await post(host.url, call(15, {}), legacy);
    expect(served.status).toBe(200);
    const event = served.body.split('\n').find((line) => line.startsWith('data: '));
    expect(JSON.parse(event!.slice('data: '.length))).toMatchObject({ id: 15, result: { structuredContent: { echo: {} } } });
  });

  it('/healthz and /readyz answer without a token; other paths are 404', async () => {
    expect((await get(`${host.base}/healthz`)).status).toBe(200);
    expect(JSON.parse((await get(`${host.base}/readyz`)).body)).toEqual({ status: 'ready' });
    expect((await get(`${host.base}/elsewhere`)).status).toBe(404);
  });
});

describe('principals', () => {
  it('a principal denied a tool by a principals: rule does not see it and is refused naming the rule', async () => {
    const client = await connect('v2-modern', 'ci-bot');
    expect((await client.listTools()).tools.map((tool) => tool['name'])).not.toContain('echo');
    const error = wireErrorOf(await client.callTool({ name: 'echo', arguments: { text: 'x' } }));
    expect(error.code).toBe('policy_denied');
    expect(error['rule']).toMatch(/org-policy\.yaml:\d+ principals\.ci-\*\.tools\.deny$/);
    expect(error['principal']).toBe('ci-bot');
  });

  it('keep their own call budgets: bob calls after alice spent hers, across sessions and eras', async () => {
    const first = await connect('v1-legacy', 'bob');
    const second = await connect('v2-modern', 'bob');
    for (const client of [first, second, first]) expect((await client.callTool({ name: 'echo', arguments: { n: 1 } }))['isError']).not.toBe(true);
    const spent = wireErrorOf(await second.callTool({ name: 'echo', arguments: { n: 4 } }));
    expect(spent.code).toBe('call_limit');
    const other = await connect('v2-legacy', 'ci-bot');
    expect((await other.callTool({ name: 'progress_steps', arguments: {} }))['isError']).not.toBe(true);
  });

  it('another principal cannot use a legacy session id it did not open', async () => {
    const opened = await post(host.url, initialize(), { authorization: `Bearer ${tokens['alice']}` });
    const sessionId = opened.headers['mcp-session-id'];
    expect(typeof sessionId).toBe('string');
    const list = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
    const stolen = await post(host.url, list, { authorization: `Bearer ${tokens['bob']}`, 'mcp-session-id': String(sessionId), 'mcp-protocol-version': '2025-11-25' });
    expect(stolen.status).toBe(404);
  });

  it("a principal opening more than 32 legacy sessions closes its own oldest, never another principal's", async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' });
    const open = async (principal: string) => String((await post(host.url, initialize(), { authorization: `Bearer ${tokens[principal]}` })).headers['mcp-session-id']);
    const listWith = async (principal: string, sessionId: string) =>
      (await post(host.url, list, { authorization: `Bearer ${tokens[principal]}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' })).status;
    const bystander = await open('bob');
    const sessions: string[] = [];
    for (let i = 0; i < 33; i++) sessions.push(await open('alice'));
    expect(await listWith('alice', sessions[0]!)).toBe(404);
    expect(await listWith('alice', sessions[32]!)).toBe(200);
    expect(await listWith('bob', bystander)).toBe(200);
  });

  it('the journal names the principal of every call (toolhost audit --json)', () => {
    const audit = spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'audit', '--state', dirs.stateDir, '--json'], { encoding: 'utf8' });
    expect(audit.status).toBe(0);
    const records = JSON.parse(audit.stdout) as Array<{ principal: string | null; tool: string; errorCode: string | null }>;
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((record) => typeof record.principal === 'string' && PRINCIPALS.includes(record.principal))).toBe(true);
    expect(records).toContainEqual(expect.objectContaining({ principal: 'ci-bot', tool: 'echo', errorCode: 'policy_denied' }));
    expect(records).toContainEqual(expect.objectContaining({ principal: 'bob', errorCode: 'call_limit' }));
  });

  function initialize(): string {
    return JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
  }
});

describe('shutdown', () => {
  it('SIGTERM: exit 0, nothing left behind, nothing on stdout', async () => {
    const exit = await host.stop();
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
