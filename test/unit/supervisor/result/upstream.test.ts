// The checks and shape of an upstream CallToolResult (result/upstream.ts):
// every content type passed on intact when it fits, counted in order against
// the inline budget, the block that does not fit spilled whole as an artifact,
// text redacted, structuredContent kept only within the limit.
import { describe, expect, it } from 'vitest';
import { createToolSchemaCompiler } from '../../../../src/registry/ajv.js';
import type { Manifest } from '../../../../src/registry/manifest.js';
import { createRedactor } from '../../../../src/supervisor/redact.js';
import { shapeUpstreamResult } from '../../../../src/supervisor/result/upstream.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');

function manifestWith(output?: Record<string, unknown>): Manifest {
  const compiler = createToolSchemaCompiler();
  return {
    name: 'srv__tool',
    ...(output ? { output, validateOutput: compiler.compile(output, '2020-12', { relaxed: true }) } : {}),
    terminal: false,
  } as unknown as Manifest;
}

function sink() {
  const stored: Array<{ bytes: Uint8Array; mimeType: string }> = [];
  return {
    stored,
    artifacts: {
      put: (bytes: Uint8Array, mimeType: string) => {
        stored.push({ bytes, mimeType });
        return { sha256: 'f'.repeat(64), uri: `toolhost://artifacts/${'f'.repeat(64)}`, size: bytes.byteLength };
      },
    },
  };
}

const redact = createRedactor({ secretValues: ['s3cr3t-value'], visibleRoots: ['/ws'] });

describe('shapeUpstreamResult', () => {
  it('passes text, image, audio, embedded resources and links on; text redacted', async () => {
    const { artifacts } = sink();
    const links: string[] = [];
    const shaped = await shapeUpstreamResult(
      {
        content: [
          { type: 'text', text: 'the key is s3cr3t-value' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'mem://a', text: 'inline' } },
          { type: 'resource', resource: { uri: 'mem://b', mimeType: 'application/pdf', blob: 'JVBERg==' } },
          { type: 'resource_link', uri: 'mem://c', name: 'c' },
        ],
      },
      manifestWith(),
      { redact, inlineBudgetBytes: 10_000, artifacts, onResourceLink: (uri) => links.push(uri) },
    );
    expect(shaped.content).toEqual([
      { type: 'text', text: 'the key is [redacted]' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'mem://a', mimeType: 'text/plain; charset=utf-8', text: 'inline' } },
      { type: 'resource', resource: { uri: 'mem://b', mimeType: 'application/pdf', blob: 'JVBERg==' } },
      { type: 'resource_link', uri: 'mem://c', name: 'c', mimeType: 'application/octet-stream' },
    ]);
    expect(links).toEqual(['mem://c']);
  });

  it('spills the block that does not fit, whole and decoded, and keeps what came before', async () => {
    const { artifacts, stored } = sink();
    const image = Buffer.alloc(3000, 7).toString('base64');
    const shaped = await shapeUpstreamResult(
      {
        content: [
          { type: 'text', text: 'small' },
          { type: 'image', data: image, mimeType: 'image/png' },
        ],
        structuredContent: { n: 1 },
      },
      manifestWith(),
      { redact, inlineBudgetBytes: 1000, artifacts },
    );
    expect(shaped.content[0]).toEqual({ type: 'text', text: 'small' });
    expect(shaped.content[1]).toMatchObject({ type: 'resource_link', mimeType: 'image/png', size: 3000 });
    expect(stored[0]?.bytes.byteLength).toBe(3000);
    // The content had to be cut: structuredContent is not passed on beside a partial result.
    expect(shaped.structuredContent).toBeUndefined();
  });

  it('a tool with an output schema whose result does not fit is output_limit', async () => {
    const { artifacts } = sink();
    await expect(
      shapeUpstreamResult({ content: [{ type: 'text', text: 'x'.repeat(2000) }], structuredContent: { n: 1 } }, manifestWith({ type: 'object' }), {
        redact,
        inlineBudgetBytes: 100,
        artifacts,
      }),
    ).rejects.toMatchObject({ code: 'output_limit', details: { limit: 100, uri: expect.stringMatching(/^toolhost:\/\/artifacts\//) } });
  });

  it('a tool with an output schema that gives no structuredContent is invalid_output', async () => {
    const { artifacts } = sink();
    await expect(
      shapeUpstreamResult({ content: [{ type: 'text', text: 'x' }] }, manifestWith({ type: 'object' }), { redact, inlineBudgetBytes: 100, artifacts }),
    ).rejects.toMatchObject({
      code: 'invalid_output',
      details: { reason: 'no_structured_content' },
    });
  });

  it.each([
    [{ content: 'text' }, 'content_not_array'],
    [{ content: [{ type: 'image', data: 'abc', mimeType: 'image/png' }] }, 'invalid_base64'],
    [{ content: [{ type: 'audio', data: 'UklGRg==', mimeType: 'audio/x-evil' }] }, 'mime_type_not_allowed'],
    [{ content: [{ type: 'resource', resource: { uri: 'mem://x' } }] }, 'resource_without_text_or_blob'],
    [{ content: Array.from({ length: 300 }, () => ({ type: 'text', text: '' })) }, 'too_many_blocks'],
    [{ content: [], structuredContent: [1, 2] }, 'structured_content_not_object'],
  ])('refuses %j as invalid_output (%s)', async (result, reason) => {
    const { artifacts } = sink();
    await expect(shapeUpstreamResult(result, manifestWith(), { redact, inlineBudgetBytes: 1000, artifacts })).rejects.toMatchObject({
      code: 'invalid_output',
      details: { reason },
    });
  });
});

describe("shapeUpstreamResult: a server's words about links and resources are redacted", () => {
  const SECRET = 's3cr3t-value';
  const upstreamManifest = { ...manifestWith(), upstream: { server: 'srv' } } as unknown as Manifest;
  const shape = async (content: unknown[]) => {
    const links: Array<[string, string]> = [];
    const shaped = await shapeUpstreamResult({ content }, upstreamManifest, {
      redact,
      inlineBudgetBytes: 100_000,
      artifacts: sink().artifacts,
      onResourceLink: (shown, uri) => links.push([shown, uri]),
    });
    return { content: shaped.content as unknown as Array<Record<string, any>>, links };
  };

  it('redacts a link name, description and MIME type, and remembers the server URI behind the one shown', async () => {
    const { content, links } = await shape([{ type: 'resource_link', uri: 'mem://doc/1', name: `doc ${SECRET}`, description: `see ${SECRET}`, mimeType: `text/${SECRET}` }]);
    expect(content[0]).toEqual({ type: 'resource_link', uri: 'mem://doc/1', name: 'doc [redacted]', description: 'see [redacted]', mimeType: 'text/[redacted]' });
    expect(links).toEqual([['mem://doc/1', 'mem://doc/1']]);
  });

  it.each([
    ['a secret in the URI', `mem://doc/${SECRET}`],
    ['a percent-encoded secret', `mem://doc/${encodeURIComponent(SECRET).replace(/-/g, '%2D')}`],
    ['a file: URI outside the workspace', 'file:///etc/passwd'],
    ['a file: URI with one slash', 'file:/etc/passwd'],
    ['a file: URI naming localhost', 'file://localhost/etc/passwd'],
    ['a file: URI naming another host', 'file://fileserver/ws/notes.txt'],
    ['a file: URI whose path is percent-encoded', 'file:///%65tc/passwd'],
    ['a file: URI under /root that does not exist', 'file:///root/.ssh/id_ed25519_nonexistent'],
    ['a custom scheme naming a host path', 'data-store://local/etc/passwd'],
  ])('shows %s as an opaque URI of the host, still linked to the server URI', async (_what, uri) => {
    const { content, links } = await shape([{ type: 'resource_link', uri, name: 'x' }]);
    expect(content[0]?.['uri']).toMatch(/^toolhost:\/\/upstream\/srv\/[0-9a-f]{32}$/);
    expect(JSON.stringify(content)).not.toContain(SECRET);
    expect(JSON.stringify(content)).not.toContain('/etc/passwd');
    expect(links).toEqual([[content[0]?.['uri'], uri]]);
  });

  it('shows a file: URI inside the workspace and a web URL as they are', async () => {
    const { content } = await shape([
      { type: 'resource_link', uri: 'file:///ws/notes.txt', name: 'n' },
      { type: 'resource_link', uri: 'https://example.com/etc/passwd', name: 'w' },
    ]);
    expect(content.map((block) => block['uri'])).toEqual(['file:///ws/notes.txt', 'https://example.com/etc/passwd']);
  });

  it("hides an embedded resource's URI the same way and redacts its MIME type and text", async () => {
    const { content } = await shape([{ type: 'resource', resource: { uri: 'file:///etc/hostname', mimeType: `Text/Plain; x=${SECRET}`, text: `host ${SECRET}` } }]);
    expect(content[0]?.['resource']).toEqual({ uri: expect.stringMatching(/^toolhost:\/\/upstream\/srv\//), mimeType: 'Text/Plain; x=[redacted]', text: 'host [redacted]' });
  });

  it.each([
    ['an image', { type: 'image', data: Buffer.from(`PNG${SECRET}`).toString('base64'), mimeType: 'image/png' }],
    ['a blob', { type: 'resource', resource: { uri: 'mem://b', mimeType: 'application/octet-stream', blob: Buffer.from(`x${SECRET}x`).toString('base64') } }],
  ])('refuses %s holding a secret in binary data (it cannot be redacted)', async (_what, block) => {
    await expect(shape([block])).rejects.toMatchObject({ code: 'invalid_output', details: { reason: 'secret_in_binary', index: 0 } });
  });
});
