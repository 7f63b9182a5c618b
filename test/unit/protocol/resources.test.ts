import { ResourceNotFoundError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { readArtifactResource } from '../../../src/protocol/resources.js';

const URI = 'toolhost://artifacts/0123';
const store = (mimeType: string, bytes: Uint8Array) => ({ readArtifact: async (uri: string) => (uri === URI ? { mimeType, bytes } : undefined) });

describe('readArtifactResource', () => {
  it.each([
    ['text/plain; charset=utf-8', Buffer.from('héllo'), { text: 'héllo' }],
    ['application/json', Buffer.from('{"a":1}'), { text: '{"a":1}' }],
    ['application/octet-stream', Buffer.from([0, 1, 2, 255]), { blob: 'AAEC/w==' }],
    ['text/plain', Buffer.from([0x66, 0xff]), { blob: 'Zv8=' }],
  ])('%s', async (mimeType, bytes, body) => {
    expect(await readArtifactResource(store(mimeType, bytes), URI)).toEqual({ contents: [{ uri: URI, mimeType, ...body }] });
  });

  it('an unknown artifact is resource-not-found', async () => {
    await expect(readArtifactResource(store('text/plain', Buffer.from('')), 'toolhost://artifacts/nope')).rejects.toBeInstanceOf(ResourceNotFoundError);
  });
});
