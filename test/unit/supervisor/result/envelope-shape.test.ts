// Shaping a tool output (SPEC 5.1): one budget over the parts in order, spills
// to artifacts in place, artifact parts stored and linked, redaction of every
// part, model_error as tool_error with the parts, host_only in _meta only and
// failing closed when it leaks into a model-visible part.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HostError } from '../../../../src/errors.js';
import { shapeToolOutput } from '../../../../src/supervisor/result/envelope-shape.js';
import { createRedactor } from '../../../../src/supervisor/redact.js';
import { readToolOutput } from '../../../../src/supervisor/result/envelope.js';
import { gradientPng } from '../../../../scripts/demo/png.mjs';

const SECRET = 'sk-live-4f9a8b7c6d5e';
const redact = createRedactor({ secretValues: [SECRET], visibleRoots: ['/work/ws'] });
const PNG = gradientPng(16, 16) as Buffer;

/** An in-memory artifact sink: content-addressed like the real store. */
function memorySink() {
  const stored = new Map<string, { bytes: Buffer; mimeType: string }>();
  return {
    stored,
    put(bytes: Uint8Array, mimeType: string) {
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      stored.set(sha256, { bytes: Buffer.from(bytes), mimeType });
      return { sha256, uri: `toolhost://artifacts/${sha256}`, size: bytes.byteLength };
    },
  };
}

async function shape(body: Record<string, unknown>, inlineBudgetBytes = 65_536) {
  const artifacts = memorySink();
  const output = readToolOutput({ 'toolhost/output': body }, 'tool');
  return { artifacts, shaped: await shapeToolOutput(output, { tool: 'tool', redact, inlineBudgetBytes, artifacts }) };
}

async function thrown(body: Record<string, unknown>, inlineBudgetBytes = 65_536): Promise<HostError> {
  try {
    await shape(body, inlineBudgetBytes);
  } catch (error) {
    expect(error).toBeInstanceOf(HostError);
    return error as HostError;
  }
  throw new Error('the output was accepted');
}

describe('shapeToolOutput', () => {
  it('keeps parts in order within the budget', async () => {
    const data = PNG.toString('base64');
    const { shaped } = await shape({
      kind: 'rich',
      parts: [
        { type: 'text', text: 'a picture:' },
        { type: 'image', data, mimeType: 'image/png' },
      ],
    });
    expect(shaped.content).toEqual([
      { type: 'text', text: 'a picture:' },
      { type: 'image', data, mimeType: 'image/png' },
    ]);
    expect(shaped.meta).toBeUndefined();
  });

  it('spills a part that does not fit as an artifact, in its place; later parts still fit', async () => {
    const data = PNG.toString('base64');
    const { shaped, artifacts } = await shape(
      {
        kind: 'rich',
        parts: [
          { type: 'text', text: 'before' },
          { type: 'image', data, mimeType: 'image/png' },
          { type: 'text', text: 'after' },
        ],
      },
      200,
    );
    expect(shaped.content.map((block) => block.type)).toEqual(['text', 'resource_link', 'text']);
    const link = shaped.content[1] as { uri: string; mimeType: string; size: number };
    expect(link).toMatchObject({ mimeType: 'image/png', size: PNG.length });
    const sha = link.uri.replace('toolhost://artifacts/', '');
    expect(artifacts.stored.get(sha)?.bytes.equals(PNG)).toBe(true);
  });

  it('stores artifact parts and links them, whatever their size', async () => {
    const { shaped, artifacts } = await shape({ kind: 'rich', parts: [{ type: 'artifact', text: 'col\n1\n', mimeType: 'text/csv', name: 'table.csv' }] });
    expect(shaped.content).toEqual([expect.objectContaining({ type: 'resource_link', name: 'table.csv', mimeType: 'text/csv', size: 6 })]);
    expect([...artifacts.stored.values()][0]?.bytes.toString()).toBe('col\n1\n');
  });

  it('redacts every textual part: text, resource text and URI, artifact names and bodies', async () => {
    const { shaped, artifacts } = await shape({
      kind: 'rich',
      parts: [
        { type: 'text', text: `token ${SECRET} in /etc/passwd` },
        { type: 'resource', resource: { uri: `https://x.example/${SECRET}`, mimeType: 'text/plain', text: SECRET } },
        { type: 'artifact', text: `key=${SECRET}`, mimeType: 'text/plain', name: `${SECRET}.txt` },
      ],
    });
    expect(JSON.stringify(shaped.content)).not.toContain(SECRET);
    expect(shaped.content[0]).toEqual({ type: 'text', text: 'token [redacted] in [path]' });
    expect([...artifacts.stored.values()].map((entry) => entry.bytes.toString())).toEqual(['key=[redacted]']);
  });

  it('refuses a binary part that holds a secret (it cannot be redacted)', async () => {
    const data = Buffer.concat([PNG, Buffer.from(SECRET)]).toString('base64');
    expect((await thrown({ kind: 'rich', parts: [{ type: 'image', data, mimeType: 'image/png' }] })).details).toMatchObject({ reason: 'secret_in_binary', part: 0 });
  });

  it('model_error: tool_error with modelError and the parts as content', async () => {
    const error = await thrown({ kind: 'model_error', parts: [{ type: 'text', text: `no such customer; ${SECRET}` }] });
    expect(error.code).toBe('tool_error');
    expect(error.details).toEqual({ modelError: true });
    expect(error.recovery).toBe('repair');
    expect(error.content).toEqual([{ type: 'text', text: 'no such customer; [redacted]' }]);
  });

  it('host_only: the value in _meta only, the model gets modelParts or a notice', async () => {
    const value = { invoiceId: 'INV-2026-000123', total: 1234.5 };
    const withParts = await shape({ kind: 'host_only', hostOnly: value, parts: [{ type: 'text', text: 'The invoice was created.' }] });
    expect(withParts.shaped.content).toEqual([{ type: 'text', text: 'The invoice was created.' }]);
    expect(withParts.shaped.meta).toEqual({ 'toolhost/hostOnly': value });
    const bare = await shape({ kind: 'host_only', hostOnly: value });
    expect(bare.shaped.content).toHaveLength(1);
    expect(JSON.stringify(bare.shaped.content)).not.toContain('INV-2026-000123');
  });

  it.each([
    ['a string inside it, in a text part', { id: 'INV-2026-000123' }, [{ type: 'text', text: 'created INV-2026-000123 for you' }]],
    ['its JSON, in a resource', { a: 1, b: [2, 3] }, [{ type: 'resource', resource: { uri: 'x:y', mimeType: 'application/json', text: '{"a":1,"b":[2,3]}' } }]],
    ['a short value as a whole part', 'ok-7', [{ type: 'text', text: ' ok-7 ' }]],
    ['a long number', { account: 12345678901 }, [{ type: 'text', text: 'account 12345678901' }]],
    [
      'a string in binary data',
      { id: 'INV-2026-000123' },
      [{ type: 'image', data: Buffer.concat([PNG, Buffer.from('INV-2026-000123')]).toString('base64'), mimeType: 'image/png' }],
    ],
  ])('host_only fails closed when %s leaks', async (_what, hostOnly, parts) => {
    const error = await thrown({ kind: 'host_only', hostOnly, parts: [{ type: 'text', text: 'harmless' }, ...parts] });
    expect([error.code, error.details]).toEqual(['invalid_output', { reason: 'host_only_leak', part: 1 }]);
  });

  it('host_only larger than the limit is output_limit', async () => {
    const error = await thrown({ kind: 'host_only', hostOnly: 'x'.repeat(500) }, 100);
    expect(error.code).toBe('output_limit');
    expect(error.details).toMatchObject({ reason: 'host_only_too_large', limit: 100 });
  });
});

describe('readToolOutput', () => {
  it.each([
    ['an unknown kind', { kind: 'fancy', parts: [] }],
    ['an unknown field', { kind: 'rich', parts: [], extra: 1 }],
    ['hostOnly on a rich output', { kind: 'rich', parts: [], hostOnly: 1 }],
    ['host_only without its value', { kind: 'host_only', parts: [] }],
  ])('refuses %s as bad_envelope', (_what, body) => {
    expect(() => readToolOutput({ 'toolhost/output': body }, 'tool')).toThrow(
      expect.objectContaining({ code: 'invalid_output', details: expect.objectContaining({ reason: 'bad_envelope' }) }),
    );
  });
});
