// Every relative link in the README and docs/ leads to a file of the
// repository, and every #anchor to a heading of the page it names (as GitHub
// slugs headings).
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, anchorsOf, documentationPages, linksOf } from '../../helpers/markdown-pages.js';

const pages = documentationPages();
const anchorsByPage = new Map(pages.map((page) => [page.path, anchorsOf(page)]));

describe('documentation links', () => {
  it('reads the README and the docs pages', () => {
    expect(pages.map((page) => page.path)).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/tools.md', 'docs/cli.md']));
  });

  for (const page of pages) {
    it(`${page.path}: every relative link and anchor resolves`, () => {
      const broken: string[] = [];
      for (const href of linksOf(page)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // http:, https:, mailto: …
        const [target = '', anchor] = href.split('#', 2);
        const path =
          target === ''
            ? page.path
            : normalize(join(dirname(page.path), decodeURIComponent(target)))
                .split('\\')
                .join('/');
        if (path.startsWith('..') || !existsSync(join(REPO_ROOT, path))) {
          broken.push(`${href}: no file ${path}`);
          continue;
        }
        if (anchor === undefined) continue;
        const anchors = anchorsByPage.get(path);
        if (anchors === undefined) broken.push(`${href}: ${path} is not a checked markdown page, so #${anchor} cannot be checked`);
        else if (!anchors.has(anchor)) broken.push(`${href}: no heading with anchor #${anchor} in ${path}`);
      }
      expect(broken).toEqual([]);
    });
  }
});
