// The idempotency key a call names in its arguments: a short string or nothing.
import { describe, expect, it } from 'vitest';
import { readIdempotencyKey } from '../../../../src/supervisor/stages/idempotency.js';
import { rejection } from '../../../helpers/journal-stores.js';

describe('readIdempotencyKey', () => {
  it('reads a short string and refuses anything else', async () => {
    expect(readIdempotencyKey({})).toBeNull();
    expect(readIdempotencyKey({ idempotencyKey: 'abc' })).toBe('abc');
    for (const bad of [42, '', 'x'.repeat(257), { k: 1 }]) {
      expect((await rejection(async () => readIdempotencyKey({ idempotencyKey: bad }))).code).toBe('invalid_arguments');
    }
  });
});
