import { describe, expect, it } from 'vitest';
import { escapeForPrompt } from '../../../src/supervisor/prompt-text.js';

describe('escapeForPrompt', () => {
  it('escapes control, ANSI and bidi characters', () => {
    expect(escapeForPrompt('a\nb\r\t\x1b[31mred\u202e\u0000', 100)).toBe('a\\nb\\r\\t\\x1b[31mred\\u202e\\x00');
  });

  it('bounds the length and marks the cut', () => {
    const out = escapeForPrompt('x'.repeat(500), 20);
    expect(out).toHaveLength(20);
    expect(out.endsWith('…')).toBe(true);
  });
});
