// resources/read of an upstream resource (upstream-resource.ts): text of any
// text MIME type redacted whatever its case; binary holding a secret refused.
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../src/supervisor/redact.js';
import { redactUpstreamResource } from '../../../src/supervisor/upstream-resource.js';

const SECRET = 'hunter2-upstream-secret';
const redact = createRedactor({ secretValues: [SECRET], visibleRoots: ['/ws'], hostRoots: ['/root'] });
const read = (mimeType: string, text: string) => redactUpstreamResource({ mimeType, bytes: Buffer.from(text) }, redact);

describe('redactUpstreamResource', () => {
  it.each(['text/plain', 'Text/Plain', 'application/xml', 'APPLICATION/JSON', 'application/rss+xml', 'text/html;profile=mcp-app'])('redacts %s', (mimeType) => {
    const result = read(mimeType, `<a>${SECRET} at /root/.ssh/id_rsa</a>`);
    if (!result.ok) throw new Error(result.reason);
    expect(Buffer.from(result.resource.bytes).toString()).toBe('<a>[redacted] at [path]</a>');
  });

  it('redacts the MIME type too', () => {
    const result = read(`text/plain; note=${SECRET}`, 'x');
    expect(result.ok && result.resource.mimeType).toBe('text/plain; note=[redacted]');
  });

  it('passes binary content on, and refuses binary content (or non-UTF-8 "text") that holds a secret', () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    expect(redactUpstreamResource({ mimeType: 'image/png', bytes: png }, redact)).toEqual({ ok: true, resource: { mimeType: 'image/png', bytes: png } });
    expect(read('application/octet-stream', `xx${SECRET}xx`)).toEqual({ ok: false, reason: 'secret_in_binary' });
    expect(redactUpstreamResource({ mimeType: 'text/plain', bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SECRET)]) }, redact)).toEqual({
      ok: false,
      reason: 'secret_in_binary',
    });
  });
});
