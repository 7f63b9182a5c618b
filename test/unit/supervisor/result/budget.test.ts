// The one inline budget (result/budget.ts) that plain values, envelope parts
// and upstream blocks all go through: blocks in order while they fit, an
// oversized block stored whole and linked in its place, later blocks still
// get their chance, the leftover budget spent on previews of spilled text.
import { describe, expect, it } from 'vitest';
import { cutUtf8, fitWithinBudget, storeSpills, type BudgetBlock } from '../../../../src/supervisor/result/budget.js';

function textBlock(text: string, name = 'block'): BudgetBlock {
  return { block: { type: 'text', text }, bytes: Buffer.byteLength(text), body: () => Buffer.from(text), mimeType: 'text/plain', name, what: 'The block', previewText: text };
}

function memorySink() {
  const stored: string[] = [];
  return {
    stored,
    put(bytes: Uint8Array, _mimeType: string) {
      stored.push(Buffer.from(bytes).toString());
      return { sha256: String(stored.length), uri: `toolhost://artifacts/${stored.length}`, size: bytes.byteLength };
    },
  };
}

describe('fitWithinBudget', () => {
  it('answers blocks within the budget inline, without the artifact store', async () => {
    const fit = fitWithinBudget([textBlock('abc'), textBlock('de')], 5);
    expect(fit.spilled).toBe(false);
    expect(fit.inline).toEqual([
      { type: 'text', text: 'abc' },
      { type: 'text', text: 'de' },
    ]);
    const sink = memorySink();
    expect(await storeSpills(fit, sink)).toEqual(fit.inline);
    expect(sink.stored).toEqual([]);
  });

  it('stores an oversized block whole in its place; a later block that fits is still shown', async () => {
    const sink = memorySink();
    const fit = fitWithinBudget([textBlock('ab'), textBlock('x'.repeat(20), 'big'), textBlock('cd')], 6);
    expect(fit.spilled).toBe(true);
    const content = await storeSpills(fit, sink);
    expect(content.map((block) => block.type)).toEqual(['text', 'text', 'resource_link', 'text']);
    expect(sink.stored).toEqual(['x'.repeat(20)]);
    // The leftover (6 - 2 - 2 bytes) previews the spilled text, before its link.
    expect(content[1]).toEqual({ type: 'text', text: 'xx' });
    expect(content[2]).toMatchObject({ type: 'resource_link', name: 'big', size: 20, uri: 'toolhost://artifacts/1' });
    expect(content[3]).toEqual({ type: 'text', text: 'cd' });
  });

  it('shows no preview when nothing of the budget is left', async () => {
    const content = await storeSpills(fitWithinBudget([textBlock('abcd'), textBlock('x'.repeat(9))], 4), memorySink());
    expect(content.map((block) => block.type)).toEqual(['text', 'resource_link']);
  });

  it('stores an always-stored block whatever its size, at no cost to the budget, and it does not count as a spill', async () => {
    const sink = memorySink();
    const artifact: BudgetBlock = { ...textBlock('a,b'), bytes: 0, name: 'table.csv', alwaysStore: { description: 'An artifact' } };
    const fit = fitWithinBudget([artifact, textBlock('hi')], 2);
    expect(fit.spilled).toBe(false);
    const content = await storeSpills(fit, sink);
    expect(content).toEqual([
      { type: 'resource_link', uri: 'toolhost://artifacts/1', name: 'table.csv', mimeType: 'text/plain', size: 3, description: 'An artifact' },
      { type: 'text', text: 'hi' },
    ]);
  });
});

describe('cutUtf8', () => {
  it('never splits a character', () => {
    // é is 2 bytes, € 3, 😀 4.
    const text = 'aé€😀b';
    const bytes = Buffer.byteLength(text);
    for (let max = 0; max <= bytes + 1; max++) {
      const cut = cutUtf8(text, max);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(max);
      expect(text.startsWith(cut)).toBe(true);
      expect(cut).not.toContain('\ufffd');
    }
    expect(cutUtf8(text, 1)).toBe('a');
    expect(cutUtf8(text, 2)).toBe('a');
    expect(cutUtf8(text, 3)).toBe('aé');
    expect(cutUtf8(text, 5)).toBe('aé');
    expect(cutUtf8(text, 6)).toBe('aé€');
    expect(cutUtf8(text, 9)).toBe('aé€');
    expect(cutUtf8(text, 10)).toBe('aé€😀');
    expect(cutUtf8(text, 0)).toBe('');
  });
});
