// The README and the pages under docs/, read once, with what a link checker
// needs: every link as written (inline, reference and HTML) and the anchors
// GitHub gives each page's headings.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Page {
  /** Relative to the repository root, `/`-separated. */
  readonly path: string;
  readonly text: string;
  readonly tokens: readonly Token[];
}

/** README.md and every docs/**\/*.md. */
export function documentationPages(): Page[] {
  const docs = listMarkdown(join(REPO_ROOT, 'docs'));
  return [join(REPO_ROOT, 'README.md'), ...docs].map((file) => {
    const text = readFileSync(file, 'utf8');
    return { path: relative(REPO_ROOT, file).split('\\').join('/'), text, tokens: new Lexer({ gfm: true }).lex(text) };
  });
}

function listMarkdown(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? listMarkdown(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : []))
    .sort();
}

/** Every token of a page, depth first (list items, table cells and inline tokens included). */
export function walk(tokens: readonly Token[], visit: (token: Token) => void): void {
  for (const token of tokens) {
    visit(token);
    const nested = token as Partial<Tokens.Generic>;
    if (Array.isArray(nested.tokens)) walk(nested.tokens as Token[], visit);
    if (token.type === 'list') walk((token as Tokens.List).items, visit);
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) walk(cell.tokens, visit);
    }
  }
}

/** The anchors GitHub makes for a page's headings (duplicates numbered as GitHub numbers them). */
export function anchorsOf(page: Page): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  walk(page.tokens, (token) => {
    if (token.type === 'heading') anchors.add(slugger.slug(plainText((token as Tokens.Heading).tokens)));
  });
  return anchors;
}

/** Every link target of a page: markdown links and images, and href/src of inline HTML. */
export function linksOf(page: Page): string[] {
  const links: string[] = [];
  walk(page.tokens, (token) => {
    if (token.type === 'link' || token.type === 'image') links.push((token as Tokens.Link).href);
    if (token.type === 'html') for (const match of token.raw.matchAll(/\b(?:href|src)="([^"]+)"/g)) links.push(match[1]!);
  });
  return links;
}

/** A heading's text as GitHub slugs it: the words of its inline tokens, code spans included, without markup. */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      const nested = token as Partial<Tokens.Generic>;
      if (Array.isArray(nested.tokens)) return plainText(nested.tokens as Token[]);
      return 'text' in token && typeof token.text === 'string' ? decodeEntities(token.text) : '';
    })
    .join('');
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
