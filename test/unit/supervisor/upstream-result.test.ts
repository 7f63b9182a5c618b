// The checks and shape of an upstream CallToolResult (upstream-result.ts):
// every content type passed on intact when it fits, counted in order against
// maxResultBytes, the block that does not fit spilled whole as an artifact,
// text redacted, structuredContent kept only within the limit.
import { describe, expect, it } from 'vitest';
import { createToolSchemaCompiler } from '../../../src/registry/ajv.js';
import type { Manifest } from '../../../src/registry/manifest.js';
import { createRedactor } from '../../../src/supervisor/redact.js';
import { shapeUpstreamResult } from '../../../src/supervisor/upstream-result.js';

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
      { redact, maxResultBytes: 10_000, artifacts, onResourceLink: (uri) => links.push(uri) },
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
      { content: [{ type: 'text', text: 'small' }, { type: 'image', data: image, mimeType: 'image/png' }], structuredContent: { n: 1 } },
      manifestWith(),
      { redact, maxResultBytes: 1000, artifacts },
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
      shapeUpstreamResult({ content: [{ type: 'text', text: 'x'.repeat(2000) }], structuredContent: { n: 1 } }, manifestWith({ type: 'object' }), { redact, maxResultBytes: 100, artifacts }),
    ).rejects.toMatchObject({ code: 'output_limit', details: { limit: 100, uri: expect.stringMatching(/^toolhost:\/\/artifacts\//) } });
  });

  it('a tool with an output schema that gives no structuredContent is invalid_output', async () => {
    const { artifacts } = sink();
    await expect(shapeUpstreamResult({ content: [{ type: 'text', text: 'x' }] }, manifestWith({ type: 'object' }), { redact, maxResultBytes: 100, artifacts })).rejects.toMatchObject({
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
    await expect(shapeUpstreamResult(result, manifestWith(), { redact, maxResultBytes: 1000, artifacts })).rejects.toMatchObject({ code: 'invalid_output', details: { reason } });
  });
});
