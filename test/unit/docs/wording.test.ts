// The README is a front door: short, opening with the four commands a newcomer
// runs, its stage table naming the supervisor's stages as the code does. No
// page speaks of how the project was made (issue numbers, rounds of work, who
// did what) or points at drafts or the contract's sections.
import { describe, expect, it } from 'vitest';
import { STAGES } from '../../../src/supervisor/stages.js';
import { documentationPages } from '../../helpers/markdown-pages.js';
import type { Tokens } from 'marked';

const pages = documentationPages();
const readme = pages.find((page) => page.path === 'README.md')!;

/** Wording that tells the history of the work rather than the software, as one pattern each. */
const HISTORY: readonly RegExp[] = [
  /\bissues? #?\d+/i,
  /\bround \d+\b/i,
  /\brounds of (?:work|review)\b/i,
  /\bthe lead\b/i,
  /\bengineers?\b/i,
  /\bSPEC\b/,
  /_drafts/,
  /\bdiary\b/i,
];

describe('README', () => {
  it('is under 300 lines', () => {
    expect(readme.text.split('\n').length).toBeLessThan(300);
  });

  it('opens its first code block with the four commands', () => {
    const first = readme.tokens.find((token): token is Tokens.Code => token.type === 'code');
    const commands = first?.text.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim());
    expect(commands).toEqual(['npm install', 'npm test', 'npm run demo', 'npm run bench']);
  });

  it('names the stages of a call exactly as src/supervisor/stages.ts does, in order', () => {
    const table = readme.tokens.find((token): token is Tokens.Table => token.type === 'table' && token.header[0]?.text === 'stage');
    expect(table, 'a table whose first column is "stage"').toBeDefined();
    const named = table!.rows.map((row) => /^`([a-z-]+)`$/.exec(row[0]?.text ?? '')?.[1]);
    expect(named).toEqual([...STAGES]);
  });
});

describe('wording of the README and docs/', () => {
  for (const page of pages) {
    it(`${page.path} tells of the software, not of how it was made`, () => {
      const found: string[] = [];
      for (const [index, line] of page.text.split('\n').entries()) {
        for (const pattern of HISTORY) if (pattern.test(line)) found.push(`${page.path}:${index + 1}: ${pattern.source}: ${line.trim().slice(0, 120)}`);
      }
      expect(found).toEqual([]);
    });
  }

  it('the docs folder holds no drafts', () => {
    expect(pages.filter((page) => page.path.startsWith('docs/_'))).toEqual([]);
  });
});
