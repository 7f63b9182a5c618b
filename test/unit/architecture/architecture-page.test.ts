// docs/architecture.md is where a maintainer looks first: its stage table, its
// folder map and the files it names must be the code as it is, and the README's
// short stage table must list the same stages in the same order.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAGES } from '../../../src/supervisor/stages.js';
import { REPO_ROOT } from '../../helpers/markdown-pages.js';

const page = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

/** The first cell of each body row of the table under `heading`, backticks removed. */
function firstCells(text: string, heading: string): string[] {
  const start = text.indexOf(heading);
  expect(start, `a section "${heading}"`).toBeGreaterThanOrEqual(0);
  const rows: string[] = [];
  for (const line of text.slice(start).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    if (!line.startsWith('|') || /^\|\s*-/.test(line)) continue;
    rows.push(line.split('|')[1]!.trim().replaceAll('`', ''));
  }
  return rows.slice(1); // the header row
}

function foldersUnder(root: string): string[] {
  return readdirSync(join(REPO_ROOT, root), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [`${root}/${entry.name}`, ...foldersUnder(`${root}/${entry.name}`)]);
}

describe('docs/architecture.md', () => {
  it('lists the stages of STAGES, in order, each decided in its own file under src/supervisor/stages/', () => {
    expect(firstCells(page, '## The stages of a call')).toEqual([...STAGES]);
    const files = readdirSync(join(REPO_ROOT, 'src/supervisor/stages')).map((name) => name.replace(/\.ts$/, ''));
    expect(files.sort()).toEqual([...STAGES].sort());
  });

  it('and the README lists the same stages in the same order', () => {
    expect(firstCells(readme, '## How a call is decided')).toEqual([...STAGES]);
  });

  it('maps every folder under src/ and sandbox/, and no folder that is gone', () => {
    const folders = [...foldersUnder('src'), ...foldersUnder('sandbox')].sort();
    expect(firstCells(page, '## Folders').sort()).toEqual(folders);
  });

  it('names only files that exist', () => {
    const named = [...page.matchAll(/`((?:src|sandbox)\/[\w./-]+\.(?:ts|mjs))`/g)].map((match) => match[1]!);
    expect(named.length).toBeGreaterThan(15);
    for (const file of named) expect(existsSync(join(REPO_ROOT, file)) && statSync(join(REPO_ROOT, file)).isFile(), file).toBe(true);
  });

  it('answers each of the three questions with one file', () => {
    const answers = page.slice(page.indexOf('## Where to look'));
    for (const [question, file] of [
      ["result's byte limit", 'src/supervisor/result/budget.ts'],
      ['timeout decided', 'src/supervisor/call-control.ts'],
      ['policy denial', 'src/supervisor/stages/policy.ts'],
    ] as const) {
      const item = answers.split('\n- ').find((entry) => entry.includes(question));
      expect(item, question).toContain(`\`${file}\``);
    }
  });
});
