// The part checks of SPEC 5.1, against hostile shapes: every refusal is
// invalid_output with a reason and the part's index, never a repair.
import { describe, expect, it } from 'vitest';
import { HostError } from '../../../../src/errors.js';
import { allowedMimeType, checkParts, decodeBase64, MAX_OUTPUT_PARTS } from '../../../../src/supervisor/result/envelope-parts.js';
import { gradientPng } from '../../../../scripts/demo/png.mjs';

const PNG = (gradientPng(4, 3) as Buffer).toString('base64');

function refusal(parts: unknown): Record<string, unknown> {
  try {
    checkParts(parts, 'tool');
  } catch (error) {
    expect(error).toBeInstanceOf(HostError);
    expect((error as HostError).code).toBe('invalid_output');
    return (error as HostError).details;
  }
  throw new Error('the parts were accepted');
}

describe('checkParts', () => {
  it('accepts every part type of SPEC 5.1 and decodes binary data once', () => {
    const parts = checkParts(
      [
        { type: 'text', text: 'hello' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'audio', data: Buffer.from('RIFF....WAVE').toString('base64'), mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///workspace/a.md', mimeType: 'text/markdown', text: '# a' } },
        { type: 'resource', resource: { uri: 'https://example.com/r.pdf', mimeType: 'application/pdf', blob: Buffer.from('%PDF-1.7').toString('base64') } },
        { type: 'artifact', text: '{"rows":[]}', mimeType: 'application/json', name: 'rows.json' },
        { type: 'artifact', data: PNG, mimeType: 'image/png' },
      ],
      'tool',
    );
    expect(parts.map((part) => part.type)).toEqual(['text', 'image', 'audio', 'resource', 'resource', 'artifact', 'artifact']);
    const image = parts[1] as { bytes: Buffer };
    expect(image.bytes.subarray(1, 4).toString('ascii')).toBe('PNG');
  });

  it.each([
    ['an image part of a text type', { type: 'image', data: PNG, mimeType: 'text/html' }],
    ['an svg image (scriptable)', { type: 'image', data: PNG, mimeType: 'image/svg+xml' }],
    ['an audio part of an image type', { type: 'audio', data: PNG, mimeType: 'image/png' }],
    ['an executable', { type: 'artifact', data: PNG, mimeType: 'application/x-msdownload' }],
    ['a text type with a foreign charset', { type: 'artifact', text: 'x', mimeType: 'text/plain; charset=latin1' }],
    ['text under a binary type', { type: 'resource', resource: { uri: 'x:y', mimeType: 'application/pdf', text: 'not a pdf' } }],
    ['no MIME type', { type: 'image', data: PNG }],
  ])('refuses %s: mime_not_allowed', (_what, part) => {
    expect(refusal([{ type: 'text', text: 'first' }, part])).toMatchObject({ reason: 'mime_not_allowed', part: 1 });
  });

  it.each([
    ['characters outside the alphabet', 'aGVsbG8*'],
    ['a missing pad', 'aGVsbG8'],
    ['data after padding', 'aG==bG8='],
    ['three pads', 'a==='],
    ['URL-safe characters', 'aGV_bG8-'],
    ['non-canonical trailing bits', 'aGVsbG9='],
    ['whitespace', 'aGVs bG8='],
  ])('refuses base64 with %s: bad_base64', (_what, data) => {
    expect(decodeBase64(data)).toBeUndefined();
    expect(refusal([{ type: 'image', data, mimeType: 'image/png' }])).toMatchObject({ reason: 'bad_base64', part: 0 });
  });

  it('refuses unknown types, unknown fields, two bodies and bad URIs', () => {
    expect(refusal([{ type: 'video', data: PNG, mimeType: 'video/mp4' }])).toMatchObject({ reason: 'unknown_part_type', part: 0 });
    expect(refusal([{ type: 'text', text: 'x', annotations: {} }])).toMatchObject({ reason: 'bad_part', field: 'annotations' });
    expect(refusal([{ type: 'artifact', text: 'x', data: PNG, mimeType: 'text/plain' }])).toMatchObject({ reason: 'bad_part', part: 0 });
    expect(refusal([{ type: 'resource', resource: { uri: 'no scheme', mimeType: 'text/plain', text: 'x' } }])).toMatchObject({ reason: 'bad_part', field: 'uri' });
    expect(refusal([{ type: 'text', text: 5 }])).toMatchObject({ reason: 'bad_part', field: 'text' });
    expect(refusal('text')).toMatchObject({ reason: 'bad_envelope' });
    expect(refusal(Array.from({ length: MAX_OUTPUT_PARTS + 1 }, () => ({ type: 'text', text: 'x' })))).toMatchObject({ reason: 'too_many_parts' });
  });

  it('normalizes allowed MIME types and refuses parameters it does not know', () => {
    expect(allowedMimeType('IMAGE/PNG')).toBe('image/png');
    expect(allowedMimeType('text/csv; charset=UTF-8')).toBe('text/csv; charset=utf-8');
    expect(allowedMimeType('image/png; q=1')).toBeUndefined();
    expect(allowedMimeType('application/javascript')).toBeUndefined();
  });
});
