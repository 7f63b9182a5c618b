import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../../src/supervisor/redact.js';
import { HostError } from '../../../../src/errors.js';
import { shapePlain } from '../../../../src/supervisor/result/plain.js';
import { JSON_MIME, TEXT_MIME } from '../../../../src/supervisor/result/staged.js';

describe('shapePlain', () => {
  const redact = createRedactor({ secretValues: ['hunter2'], visibleRoots: [] });
  const stored: { bytes: Uint8Array; mime: string }[] = [];
  const artifacts = {
    put(bytes: Uint8Array, mime: string) {
      stored.push({ bytes, mime });
      return { sha256: 'f'.repeat(64), uri: `toolhost://artifacts/${'f'.repeat(64)}`, size: bytes.byteLength };
    },
  };
  const options = { tool: 't', redact, inlineBudgetBytes: 64, artifacts };

  it('shapes an object as structuredContent plus its JSON text', async () => {
    const shaped = await shapePlain({ type: 'json', value: { a: 1, pw: 'hunter2' } }, options);
    expect(shaped.structuredContent).toEqual({ a: 1, pw: '[redacted]' });
    expect(shaped.content).toEqual([{ type: 'text', text: '{"a":1,"pw":"[redacted]"}' }]);
  });

  it('shapes arrays, numbers and strings as text only', async () => {
    expect((await shapePlain({ type: 'json', value: [1, 2] }, options)).content).toEqual([{ type: 'text', text: '[1,2]' }]);
    expect((await shapePlain({ type: 'json', value: 'hello' }, options)).content).toEqual([{ type: 'text', text: 'hello' }]);
    expect((await shapePlain({ type: 'text', text: 'hi hunter2' }, options)).content).toEqual([{ type: 'text', text: 'hi [redacted]' }]);
    expect((await shapePlain({ type: 'json', value: 3 }, options)).structuredContent).toBeUndefined();
  });

  it('spills a payload over the limit to an artifact: preview within the limit, a link, no structuredContent', async () => {
    stored.length = 0;
    const value = { text: '€'.repeat(40) };
    const shaped = await shapePlain({ type: 'json', value }, options);
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
    const error = await shapePlain({ type: 'json', value }, { ...options, hasOutputSchema: true }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    const uri = `toolhost://artifacts/${'f'.repeat(64)}`;
    expect(error).toBeInstanceOf(HostError);
    if (!(error instanceof HostError)) return;
    expect(error.code).toBe('output_limit');
    expect(error.details).toEqual({ bytes: Buffer.byteLength(JSON.stringify(value)), limit: 64, uri });
    expect(error.content.map((block) => block.type)).toEqual(['text', 'resource_link']);
    expect((await shapePlain({ type: 'json', value: { a: 1 } }, { ...options, hasOutputSchema: true })).structuredContent).toEqual({ a: 1 });
  });

  it('spills long text as text/plain', async () => {
    stored.length = 0;
    await shapePlain({ type: 'text', text: 'x'.repeat(65) }, options);
    expect(stored[0]?.mime).toBe(TEXT_MIME);
  });
});
