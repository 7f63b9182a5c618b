// Which MIME types are text (text-mime.ts): any case, with parameters, the
// structured-syntax suffixes, and not binary types.
import { describe, expect, it } from 'vitest';
import { isTextMimeType } from '../../../src/supervisor/text-mime.js';

describe('isTextMimeType', () => {
  it.each([
    'text/plain',
    'Text/Plain',
    'TEXT/HTML; charset=utf-8',
    'text/html;profile=mcp-app',
    'application/json',
    'Application/XML',
    'application/ld+json',
    'image/svg+xml',
    'application/atom+xml',
    'application/vnd.api+json',
    'application/x-yaml',
    'application/javascript',
  ])('%s is text', (mimeType) => expect(isTextMimeType(mimeType)).toBe(true));
  it.each(['image/png', 'application/octet-stream', 'application/pdf', 'audio/wav', 'application/zip', 'application/jsonx', ''])('%s is not text', (mimeType) =>
    expect(isTextMimeType(mimeType)).toBe(false),
  );
});
