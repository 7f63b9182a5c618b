import { describe, expect, it } from 'vitest';
import { escapeForPrompt, escapeHeadAndTail } from '../../../src/supervisor/prompt-text.js';

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

describe('invisible characters (every Cc and Cf)', () => {
  it.each([
    ['ALM', '\u061c', '\\u061c'],
    ['zero-width space', '\u200b', '\\u200b'],
    ['zero-width joiner', '\u200d', '\\u200d'],
    ['word joiner', '\u2060', '\\u2060'],
    ['BOM', '\ufeff', '\\ufeff'],
    ['soft hyphen', '\u00ad', '\\xad'],
    ['a tag character', '\u{e0041}', '\\u{e0041}'],
    ['LRM', '\u200e', '\\u200e'],
    ['line separator', '\u2028', '\\u2028'],
    ['NEL', '\u0085', '\\x85'],
  ])('escapes %s', (_name, char, shown) => {
    expect(escapeForPrompt(`a${char}b`, 100)).toBe(`a${shown}b`);
  });

  it('leaves visible text alone, other scripts and emoji included', () => {
    expect(escapeForPrompt('héllo مرحبا 😀', 100)).toBe('héllo مرحبا 😀');
  });
});

describe('escapeHeadAndTail', () => {
  it('keeps the head and the tail of a long text and counts the bytes left out', () => {
    const text = `start${'m'.repeat(1000)}end; rm -rf /`;
    const out = escapeHeadAndTail(text, 100);
    expect(out.length).toBeLessThanOrEqual(100);
    expect(out.startsWith('start')).toBe(true);
    expect(out.endsWith('end; rm -rf /')).toBe(true);
    const match = /…\[(\d+) bytes left out\]…/.exec(out);
    expect(match).not.toBeNull();
    const shown = out.length - (match?.[0].length ?? 0);
    expect(Number(match?.[1])).toBe(text.length - shown);
  });

  it('returns a short text whole', () => {
    expect(escapeHeadAndTail('{"a":1}', 100)).toBe('{"a":1}');
  });
});
