import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../src/supervisor/redact.js';
import { cutUtf8, JSON_MIME, shapeResult, TEXT_MIME } from '../../../src/supervisor/result-shape.js';

describe('cutUtf8', () => {
  it('never splits a character', () => {
    // é is 2 bytes, € 3, 😀 4.
    const text = 'aé€😀b';
    const bytes = Buffer.byteLength(text);
    for (let max = 0; max <= bytes + 1; max++) {
      const cut = cutUtf8(text, max);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(max);
      expect(text.startsWith(cut)).toBe(true);
      expect(cut).not.toContain('\ufffd');
    }
    expect(cutUtf8(text, 1)).toBe('a');
    expect(cutUtf8(text, 2)).toBe('a');
    expect(cutUtf8(text, 3)).toBe('aé');
    expect(cutUtf8(text, 5)).toBe('aé');
    expect(cutUtf8(text, 6)).toBe('aé€');
    expect(cutUtf8(text, 9)).toBe('aé€');
    expect(cutUtf8(text, 10)).toBe('aé€😀');
    expect(cutUtf8(text, 0)).toBe('');
  });
});

describe('shapeResult', () => {
  const redact = createRedactor({ secretValues: ['hunter2'], visibleRoots: [] });
  const stored: { bytes: Uint8Array; mime: string }[] = [];
  const artifacts = {
    put(bytes: Uint8Array, mime: string) {
      stored.push({ bytes, mime });
      return { sha256: 'f'.repeat(64), uri: `toolhost://artifacts/${'f'.repeat(64)}`, size: bytes.byteLength };
    },
  };
  const options = { tool: 't', redact, maxResultBytes: 64, artifacts };

  it('shapes an object as structuredContent plus its JSON text', async () => {
    const shaped = await shapeResult({ type: 'json', value: { a: 1, pw: 'hunter2' } }, options);
    expect(shaped.structuredContent).toEqual({ a: 1, pw: '[redacted]' });
    expect(shaped.content).toEqual([{ type: 'text', text: '{"a":1,"pw":"[redacted]"}' }]);
  });

  it('shapes arrays, numbers and strings as text only', async () => {
    expect((await shapeResult({ type: 'json', value: [1, 2] }, options)).content).toEqual([{ type: 'text', text: '[1,2]' }]);
    expect((await shapeResult({ type: 'json', value: 'hello' }, options)).content).toEqual([{ type: 'text', text: 'hello' }]);
    expect((await shapeResult({ type: 'text', text: 'hi hunter2' }, options)).content).toEqual([{ type: 'text', text: 'hi [redacted]' }]);
    expect((await shapeResult({ type: 'json', value: 3 }, options)).structuredContent).toBeUndefined();
  });

  it('spills a payload over the limit to an artifact: preview within the limit, a link, no structuredContent', async () => {
    stored.length = 0;
    const value = { text: '€'.repeat(40) };
    const shaped = await shapeResult({ type: 'json', value }, options);
    const payload = JSON.stringify(value);
    expect(shaped.structuredContent).toBeUndefined();
    expect(stored).toHaveLength(1);
    expect(Buffer.from(stored[0]!.bytes).toString('utf8')).toBe(payload);
    expect(stored[0]!.mime).toBe(JSON_MIME);
    const [preview, link] = shaped.content;
    expect(preview?.type).toBe('text');
    if (preview?.type === 'text') {
      expect(Buffer.byteLength(preview.text)).toBeLessThanOrEqual(64);
      expect(payload.startsWith(preview.text)).toBe(true);
    }
    expect(link).toMatchObject({ type: 'resource_link', uri: `toolhost://artifacts/${'f'.repeat(64)}`, mimeType: JSON_MIME, size: Buffer.byteLength(payload) });
  });

  it('spilled results of tools with an output schema: an output_limit error with the preview and the link', async () => {
    stored.length = 0;
    const value = { text: 'z'.repeat(100) };
    const shaped = await shapeResult({ type: 'json', value }, { ...options, hasOutputSchema: true });
    const uri = `toolhost://artifacts/${'f'.repeat(64)}`;
    expect(shaped.error?.code).toBe('output_limit');
    expect(shaped.error?.details).toEqual({ bytes: Buffer.byteLength(JSON.stringify(value)), limit: 64, uri });
    expect(shaped.structuredContent).toBeUndefined();
    expect(shaped.content.map((block) => block.type)).toEqual(['text', 'resource_link']);
    expect((await shapeResult({ type: 'json', value: { a: 1 } }, { ...options, hasOutputSchema: true })).error).toBeUndefined();
  });

  it('spills long text as text/plain', async () => {
    stored.length = 0;
    await shapeResult({ type: 'text', text: 'x'.repeat(65) }, options);
    expect(stored[0]?.mime).toBe(TEXT_MIME);
  });
});
