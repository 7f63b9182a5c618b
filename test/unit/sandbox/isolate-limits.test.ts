// The isolate process's bounds (sandbox/isolate-limits.mjs) are the ones the
// host's wire types name (ISOLATE_WIRE_LIMITS): the far side cannot import them.
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../sandbox/isolate-limits.mjs';
import { ISOLATE_WIRE_LIMITS } from '../../../src/runner/wire.js';

describe('isolate wire limits', () => {
  it('are the same on both sides', () => {
    expect({ ...LIMITS }).toEqual({ ...ISOLATE_WIRE_LIMITS });
  });
});
