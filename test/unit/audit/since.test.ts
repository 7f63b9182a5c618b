import { describe, expect, it } from 'vitest';
import { parseSince } from '../../../src/audit/since.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');

describe('parseSince', () => {
  it.each([
    ['30s', NOW - 30_000],
    ['15m', NOW - 15 * 60_000],
    ['1h', NOW - 3_600_000],
    ['2d', NOW - 2 * 86_400_000],
    ['1w', NOW - 7 * 86_400_000],
    ['2026-11-29', Date.parse('2026-11-29T00:00:00Z')],
    ['2026-11-29T13:00:00Z', Date.parse('2026-11-29T13:00:00Z')],
    ['2026-11-29T13:00:00.250+02:00', Date.parse('2026-11-29T11:00:00.250Z')],
  ])('%s', (text, expected) => {
    expect(parseSince(text, NOW)).toBe(expected);
  });

  it.each(['', 'yesterday', '1y', '-1h', '1.5h', '11/29/2026', '2026-13-45'])('refuses %j', (text) => {
    expect(parseSince(text, NOW)).toBeUndefined();
  });
});
