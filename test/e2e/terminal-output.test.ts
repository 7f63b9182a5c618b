// What a person sees at a terminal, through a real pseudo-terminal (util-linux
// `script`): `list` in aligned columns that fit 80 and 200 columns, a failed
// `call` said once, and a progress bar for a tool that reports a total; and
// none of the terminal's dressing when the output is a pipe.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, ensureBuilt, REPO_ROOT } from '../helpers/mcp-clients.js';

let project: string;

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Runs toolhost in a pseudo-terminal of `columns` columns; the screen's bytes, CR LF as LF. */
function inTerminal(columns: number, ...args: string[]): { status: number | null; screen: string } {
  const command = [process.execPath, '--no-node-snapshot', BUILT_MAIN, ...args].map(shellQuote).join(' ');
  const result = spawnSync('script', ['-q', '-e', '-c', `stty cols ${columns} rows 50; ${command}`, '/dev/null'], {
    cwd: project,
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { status: result.status, screen: result.stdout.replace(/\r\n/g, '\n') };
}

function inPipe(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, ...args], { cwd: project, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Display lines without escape sequences (a progress bar's cursor moves). */
function plainLines(screen: string): string[] {
  // eslint-disable-next-line no-control-regex
  return screen
    .replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

beforeAll(async () => {
  await ensureBuilt();
  const root = mkdtempSync(join(tmpdir(), 'toolhost-terminal-'));
  project = join(root, 'project');
  expect(spawnSync(process.execPath, ['--no-node-snapshot', BUILT_MAIN, 'init', project], { encoding: 'utf8' }).status).toBe(0);
  cpSync(join(REPO_ROOT, 'test/fixtures/terminal'), join(project, 'manifests'), { recursive: true });
  // A repository rule to show: a long rule name is what a narrow terminal must not cut.
  cpSync(join(REPO_ROOT, 'test/fixtures/terminal-policy.yaml'), join(project, 'policies', 'deny-words.yaml'));
});

afterAll(() => rmSync(join(project, '..'), { recursive: true, force: true }));

describe('toolhost list at a terminal', () => {
  for (const columns of [80, 200]) {
    it(`aligns every row under its header and fits ${columns} columns`, () => {
      const { status, screen } = inTerminal(columns, 'list');
      expect(status, screen).toBe(0);
      const lines = plainLines(screen);
      const header = lines[0]!;
      expect(header.startsWith('NAME')).toBe(true);
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(columns);
      // Every row's cells start where their header starts.
      const starts = [...header.matchAll(/\S+/g)].map((match) => match.index);
      const rows = lines.slice(2).filter((line) => /^[a-z]/.test(line));
      expect(rows.map((row) => row.split(/\s{2,}/)[0])).toEqual(['greet', 'progress_steps', 'word_count']);
      for (const row of rows) {
        const cells = [...row.matchAll(/(?:^|\s{2,})(\S(?:\S| (?=\S))*)/g)].map((match) => (match.index ?? 0) + match[0].length - (match[1]?.length ?? 0));
        expect(cells.slice(0, starts.length)).toEqual(starts.slice(0, cells.length));
      }
      // The rule is shown whole: in its column at 200, on a line of its own at 80.
      const rule = 'policies/deny-words.yaml:8 tools.deny';
      expect(lines.some((line) => line.includes(rule))).toBe(true);
      if (columns === 200) expect(header.split(/\s{2,}/)).toEqual(['NAME', 'CLASS', 'SANDBOX', 'TRUST', 'LISTED', 'DECISION', 'RULE']);
    });
  }

  it('prints tab-separated columns in a pipe', () => {
    const { status, stdout } = inPipe('list');
    expect(status).toBe(0);
    expect(stdout.split('\n')[0]).toBe('NAME\tCLASS\tSANDBOX\tTRUST\tLISTED\tDECISION\tRULE');
  });
});

describe('toolhost call at a terminal', () => {
  it('says a failure once: the sentence, no JSON, no log line', () => {
    const { status, screen } = inTerminal(120, 'call', 'greet', '{}');
    expect(status).toBe(1);
    expect(plainLines(screen)).toEqual(['toolhost call: invalid_arguments: In greet, argument /name is required.']);
  });

  it('prints the whole error result with --json, and nothing else', () => {
    const { status, screen } = inTerminal(120, 'call', 'greet', '{}', '--json');
    expect(status).toBe(1);
    expect(JSON.parse(screen)).toMatchObject({ isError: true, code: 'invalid_arguments', details: { path: '/name' } });
  });

  it('shows a progress bar for a tool that reports a total, then only the result', () => {
    const { status, screen } = inTerminal(120, 'call', 'progress_steps');
    expect(status, screen).toBe(0);
    expect(screen).toMatch(/[█░]{10,} 1\/5 step 1/);
    expect(screen).toMatch(/█{30} 5\/5 step 5/);
    const json = screen.slice(screen.indexOf('{'));
    expect(JSON.parse(json)).toMatchObject({ structuredContent: { steps: 5 } });
  });

  it('shows no progress and no escape sequence in a pipe', () => {
    const { status, stdout, stderr } = inPipe('call', 'progress_steps');
    expect(status, stderr).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).not.toContain('\u001b');
    expect(JSON.parse(stdout)).toMatchObject({ structuredContent: { steps: 5 } });
  });
});
