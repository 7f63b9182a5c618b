// toolhost/render and toolhost/parse over MCP (SPEC section 9), through the
// built host and real SDK clients of both eras: declarations of the listed
// tools in each format; an emitted call read back into {name, arguments}
// (not run: sent as an ordinary tools/call it meets every check); a refused
// emission is JSON-RPC -32602 with data {code: malformed_request, reason}.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KINDS, ensureBuilt } from '../helpers/mcp-clients.js';
import { makeHostDirs, startClient, stopClient, type HostClient, type HostDirs } from '../helpers/host-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

type RenderResult = { format: string; text: string };
type ParseResult = { name: string; arguments: Record<string, unknown> };

/**
 * A result schema both SDKs accept: a Standard Schema (v2 clients) that also has the
 * zod-3 style safeParse the v1 client calls. It checks the shape the host promises.
 */
function resultSchema<T>(what: string, check: (value: Record<string, unknown>) => boolean) {
  const validate = (value: unknown) =>
    typeof value === 'object' && value !== null && check(value as Record<string, unknown>) ? { value: value as T } : { issues: [{ message: `not a ${what} result` }] };
  return {
    '~standard': { version: 1 as const, vendor: 'toolhost-test', validate },
    safeParse: (value: unknown) => {
      const outcome = validate(value);
      return 'value' in outcome ? { success: true, data: outcome.value } : { success: false, error: new Error(outcome.issues[0]?.message) };
    },
  };
}

const RENDER_RESULT = resultSchema<RenderResult>('render', (value) => typeof value['format'] === 'string' && typeof value['text'] === 'string');
const PARSE_RESULT = resultSchema<ParseResult>(
  'parse',
  (value) => typeof value['name'] === 'string' && typeof value['arguments'] === 'object' && value['arguments'] !== null && !Array.isArray(value['arguments']),
);

describe.each(CLIENT_KINDS)('toolhost/render and toolhost/parse with a %s client', (kind) => {
  let dirs: HostDirs;
  let client: HostClient;

  const request = <T>(method: string, params: Record<string, unknown>, schema: unknown): Promise<T> =>
    (client.raw as unknown as { request: (request: unknown, schema: unknown) => Promise<T> }).request({ method, params }, schema);
  const render = (params: Record<string, unknown>) => request<RenderResult>('toolhost/render', params, RENDER_RESULT);
  // The modern era stamps _meta (serverInfo) on every result: keep only the call.
  const parse = async (params: Record<string, unknown>): Promise<ParseResult> => {
    const result = await request<ParseResult>('toolhost/parse', params, PARSE_RESULT);
    return { name: result.name, arguments: result.arguments };
  };
  /** The JSON-RPC error a request was refused with. */
  const refusal = async (promise: Promise<unknown>): Promise<{ code: number; data: Record<string, unknown> }> => {
    const error = await promise.then(
      () => undefined,
      (thrown: unknown) => thrown as { code: number; data: Record<string, unknown> },
    );
    if (error === undefined) throw new Error('the request was not refused');
    return { code: error.code, data: error.data };
  };

  beforeAll(async () => {
    await ensureBuilt();
    dirs = makeHostDirs();
    client = await startClient(dirs, { kind });
  }, 300_000);
  afterAll(async () => {
    await stopClient(client, dirs);
    dirs.cleanup();
  });

  it('renders the listed tools as JSON function schemas by default', async () => {
    const listed = (await client.listTools()).tools;
    const result = await render({});
    expect(result.format).toBe('json');
    const functions = JSON.parse(result.text) as Array<{ type: string; function: { name: string; description: string; parameters: unknown } }>;
    expect(functions.map((entry) => entry.function.name)).toEqual(listed.map((tool) => tool['name']));
    const echo = functions.find((entry) => entry.function.name === 'echo');
    expect(echo).toMatchObject({ type: 'function', function: { description: 'Return the arguments.', parameters: { type: 'object', properties: { text: { type: 'string' } } } } });
    // Denied tools are not rendered, as they are not listed.
    expect(functions.map((entry) => entry.function.name)).not.toContain('forbidden_shell');
  });

  it('renders XML and p-type signatures', async () => {
    const xml = await render({ format: 'xml' });
    expect(xml.format).toBe('xml');
    expect(xml.text.startsWith('<tools>')).toBe(true);
    expect(xml.text).toContain('<tool name="echo">');
    const ptype = await render({ format: 'ptype' });
    expect(ptype.format).toBe('ptype');
    expect(ptype.text.split('\n')).toContain('echo(text?: string, n?: integer)  # Return the arguments.');
  });

  it('parses an emitted XML call with values coerced by the schema; as a tools/call it runs', async () => {
    const call = await parse({ text: '<echo><text>hi there</text><n>3</n></echo>' });
    expect(call).toEqual({ name: 'echo', arguments: { text: 'hi there', n: 3 } });
    const result = await client.callTool(call);
    expect(result['structuredContent']).toEqual({ echo: { text: 'hi there', n: 3 } });
  });

  it('parses each format, detected or named', async () => {
    expect(await parse({ text: 'echo(text="a", n=2)' })).toEqual({ name: 'echo', arguments: { text: 'a', n: 2 } });
    expect(await parse({ text: '{"name": "echo", "arguments": {"n": 5}}', format: 'json' })).toEqual({ name: 'echo', arguments: { n: 5 } });
  });

  it('a parsed call is only parsed: sent as tools/call it meets the argument checks', async () => {
    const call = await parse({ text: '{"name": "echo", "arguments": {"n": "not a number", "extra": true}}' });
    expect(call).toEqual({ name: 'echo', arguments: { n: 'not a number', extra: true } });
    expect(wireErrorOf(await client.callTool(call)).code).toBe('invalid_arguments');
  });

  it.each([
    ['an unclosed tag', '<echo><text>hi</echo>'],
    ['extra text after the call', '<echo><text>hi</text></echo> and more'],
    ['a tool that is not listed', '<forbidden_shell><command>ls</command></forbidden_shell>'],
    ['no call at all', 'I would call echo here'],
    ['ptype text in the JSON format', 'echo(text="a")'],
  ])('refuses %s with -32602 malformed_request and a reason', async (_what, text) => {
    const format = text.startsWith('echo(') ? 'json' : undefined;
    const { code, data } = await refusal(parse({ text, ...(format ? { format } : {}) }));
    expect(code).toBe(-32602);
    expect(data).toMatchObject({ code: 'malformed_request', reason: expect.any(String) });
    expect(String(data['reason']).length).toBeGreaterThan(0);
  });

  it('refuses bad params the same way', async () => {
    for (const [method, params] of [
      ['toolhost/render', { format: 'yaml' }],
      ['toolhost/parse', {}],
      ['toolhost/parse', { text: 42 }],
      ['toolhost/parse', { text: 'echo()', surprise: 1 }],
    ] as const) {
      const { code, data } = await refusal(request(method, params, method === 'toolhost/render' ? RENDER_RESULT : PARSE_RESULT));
      expect({ method, params, code, errorCode: data['code'] }).toEqual({ method, params, code: -32602, errorCode: 'malformed_request' });
    }
  });
});
