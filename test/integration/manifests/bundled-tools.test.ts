// The bundled tools' own logic, run against the real ctx.fs (sandbox/ctx/scoped-fs.mjs)
// over a temporary workspace, and the Python tools run as real python3 processes
// speaking their protocols. Running them inside isolates, workers and bubblewrap is
// the runners' integration tests' job.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, existsSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createScopedFs } from '../../../sandbox/ctx/scoped-fs.mjs';
import { createScopedFetch } from '../../../sandbox/ctx/scoped-fetch.mjs';
import { waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';

const MANIFESTS = fileURLToPath(new URL('../../../manifests/', import.meta.url));
const MARKER = `toolhost-bundled-tools-${randomUUID()}`;

type Tool = (args: Record<string, unknown>, ctx: unknown) => Promise<unknown>;

async function tool(file: string): Promise<Tool> {
  const module = (await import(join(MANIFESTS, file))) as { default: Tool };
  return module.default;
}

let workspace = '';
beforeEach(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-tools-')));
});
afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
});
afterAll(async () => {
  expect(await waitForNoMarkedProcesses(MARKER)).toEqual([]);
});

function ctxFor(access: 'read' | 'read_write') {
  return { fs: createScopedFs({ roots: [{ path: workspace, access }] }) };
}

function write(relative: string, text: string): void {
  const path = join(workspace, relative);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: unknown }).code ?? (error as Error).message;
  }
  return 'no error';
}

describe('read_file', () => {
  it('returns lines with paging facts', async () => {
    write('notes.txt', 'one\ntwo\nthree\n');
    const readFile = await tool('read_file.js');
    expect(await readFile({ path: 'notes.txt' }, ctxFor('read'))).toEqual({
      path: 'notes.txt',
      text: 'one\ntwo\nthree',
      startLine: 1,
      endLine: 3,
      totalLines: 3,
      truncated: false,
    });
    expect(await readFile({ path: 'notes.txt', startLine: 2, maxLines: 1 }, ctxFor('read'))).toEqual({
      path: 'notes.txt',
      text: 'two',
      startLine: 2,
      endLine: 2,
      totalLines: 3,
      truncated: true,
    });
  });

  it('refuses a folder and a path outside the workspace', async () => {
    mkdirSync(join(workspace, 'sub'));
    const readFile = await tool('read_file.js');
    expect(await codeOf(readFile({ path: 'sub' }, ctxFor('read')))).toBe('sub is not a file (it is a directory)');
    expect(await codeOf(readFile({ path: '../../etc/passwd' }, ctxFor('read')))).toBe('policy_denied');
  });
});

describe('list_dir', () => {
  it('lists sorted entries, recursing to the given depth and skipping hidden names', async () => {
    write('b.txt', 'bb');
    write('a/inner.txt', 'i');
    write('a/deeper/x.txt', 'x');
    write('.hidden', 'h');
    const listDir = await tool('list_dir.js');
    expect(await listDir({}, ctxFor('read'))).toEqual({
      path: '.',
      entries: [
        { path: 'a', type: 'directory', size: 0 },
        { path: 'b.txt', type: 'file', size: 2 },
      ],
      truncated: false,
    });
    const deep = (await listDir({ depth: 2, includeHidden: true }, ctxFor('read'))) as { entries: { path: string }[] };
    expect(deep.entries.map((entry) => entry.path)).toEqual(['.hidden', 'a', 'a/deeper', 'a/inner.txt', 'b.txt']);
  });

  it('stops at maxEntries and says so', async () => {
    for (const name of ['1', '2', '3']) write(`${name}.txt`, name);
    const listDir = await tool('list_dir.js');
    expect(await listDir({ maxEntries: 2 }, ctxFor('read'))).toMatchObject({ truncated: true, entries: [{ path: '1.txt' }, { path: '2.txt' }] });
  });

  it('does not follow a symlinked folder', async () => {
    write('real/file.txt', 'f');
    symlinkSync(join(workspace, 'real'), join(workspace, 'link'));
    const listDir = await tool('list_dir.js');
    const result = (await listDir({ depth: 3 }, ctxFor('read'))) as { entries: { path: string; type: string }[] };
    expect(result.entries).toEqual([
      { path: 'link', type: 'symlink', size: 0 },
      { path: 'real', type: 'directory', size: 0 },
      { path: 'real/file.txt', type: 'file', size: 1 },
    ]);
  });
});

describe('search_text', () => {
  beforeEach(() => {
    write('src/a.ts', 'const alpha = 1;\nconst beta = 2;\n');
    write('src/b.ts', '// Alpha is here\n');
    write('node_modules/dep/index.js', 'alpha');
    write('.git/config', 'alpha');
    write('big.txt', `alpha\n${'x'.repeat(1024 * 1024)}`);
    write('bin.dat', 'alpha\u0000');
  });

  it('finds substrings with path, line and column, skipping hidden, vendored, large and binary files', async () => {
    const searchText = await tool('search_text.js');
    expect(await searchText({ query: 'alpha' }, ctxFor('read'))).toEqual({
      matches: [{ path: 'src/a.ts', line: 1, column: 7, text: 'const alpha = 1;' }],
      filesSearched: 3,
      truncated: false,
    });
  });

  it('matches regular expressions and ignores case when asked', async () => {
    const searchText = await tool('search_text.js');
    const result = (await searchText({ query: '^const (alpha|beta)', regex: true, caseSensitive: false, path: 'src' }, ctxFor('read'))) as { matches: unknown[] };
    expect(result.matches).toEqual([
      { path: 'src/a.ts', line: 1, column: 1, text: 'const alpha = 1;' },
      { path: 'src/a.ts', line: 2, column: 1, text: 'const beta = 2;' },
    ]);
    const insensitive = (await searchText({ query: 'ALPHA', caseSensitive: false, path: 'src' }, ctxFor('read'))) as { matches: { path: string }[] };
    expect(insensitive.matches.map((match) => match.path)).toEqual(['src/a.ts', 'src/b.ts']);
  });

  it('stops at maxMatches and refuses a bad regular expression', async () => {
    const searchText = await tool('search_text.js');
    expect(await searchText({ query: 'const', maxMatches: 1, path: 'src/a.ts' }, ctxFor('read'))).toMatchObject({ truncated: true, matches: [{ line: 1 }] });
    expect(await codeOf(searchText({ query: '(', regex: true }, ctxFor('read')))).toContain('query is not a valid regular expression');
  });
});

describe('write_file', () => {
  it('creates and replaces files, counting UTF-8 bytes', async () => {
    const writeFile = await tool('write_file.js');
    expect(await writeFile({ path: 'out/new.txt', text: 'héllo' }, ctxFor('read_write'))).toEqual({ path: 'out/new.txt', bytes: 6, created: true });
    expect(readFileSync(join(workspace, 'out/new.txt'), 'utf8')).toBe('héllo');
    expect(await writeFile({ path: 'out/new.txt', text: '😀' }, ctxFor('read_write'))).toEqual({ path: 'out/new.txt', bytes: 4, created: false });
  });

  it('honours createOnly and refuses paths outside the workspace', async () => {
    write('kept.txt', 'original');
    const writeFile = await tool('write_file.js');
    expect(await codeOf(writeFile({ path: 'kept.txt', text: 'x', createOnly: true }, ctxFor('read_write')))).toBe('kept.txt already exists and createOnly is set');
    expect(readFileSync(join(workspace, 'kept.txt'), 'utf8')).toBe('original');
    expect(await codeOf(writeFile({ path: '../escape.txt', text: 'x' }, ctxFor('read_write')))).toBe('policy_denied');
  });
});

describe('hash_file', () => {
  it('returns the SHA-256 of the file text', async () => {
    write('data.txt', 'abc');
    const hashFile = await tool('hash_file.mjs');
    expect(await hashFile({ path: 'data.txt' }, ctxFor('read'))).toEqual({
      path: 'data.txt',
      algorithm: 'sha256',
      digest: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      bytes: 3,
    });
  });
});

describe('json_format', () => {
  it('pretty-prints, minifies and sorts keys, keeping "__proto__" an ordinary key', async () => {
    const jsonFormat = await tool('community/json_format.js');
    expect(await jsonFormat({ json: '{"b":1,"a":[1,2]}' }, {})).toEqual({ formatted: '{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ]\n}' });
    expect(await jsonFormat({ json: '{"b":1,"a":{"d":1,"c":2}}', indent: 0, sortKeys: true }, {})).toEqual({ formatted: '{"a":{"c":2,"d":1},"b":1}' });
    expect(await jsonFormat({ json: '{"__proto__":{"x":1},"a":1}', indent: 0, sortKeys: true }, {})).toEqual({ formatted: '{"__proto__":{"x":1},"a":1}' });
    expect(await codeOf(jsonFormat({ json: '{"a":' }, {}))).toContain('json is not valid JSON');
  });
});

describe('http_get', () => {
  let server: Server;
  let origin = '';
  beforeEach(async () => {
    server = createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ path: request.url, method: request.method }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function fetchCtx(allow: string[]) {
    const fetch = createScopedFetch({ allow });
    // The isolate prelude adds text() to the plain data ctx.fetch returns.
    return {
      fetch: async (url: string, init?: object) => {
        const response = await fetch(url, init);
        return { ...response, text: async () => response.body };
      },
    };
  }

  it('returns status, content type and a body cut at maxChars', async () => {
    const httpGet = await tool('http_get.js');
    const host = new URL(origin).host;
    expect(await httpGet({ url: `${origin}/repos/x` }, fetchCtx([host]))).toEqual({
      status: 200,
      contentType: 'application/json',
      body: '{"path":"/repos/x","method":"GET"}',
      truncated: false,
    });
    expect(await httpGet({ url: `${origin}/repos/x`, maxChars: 5 }, fetchCtx([host]))).toEqual({ status: 200, contentType: 'application/json', body: '{"pat', truncated: true });
  });

  it('cannot reach a host outside network.allow', async () => {
    const httpGet = await tool('http_get.js');
    expect(await codeOf(httpGet({ url: `${origin}/` }, fetchCtx(['api.github.com'])))).toBe('policy_denied');
  });
});

function runPython(script: string, input: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('python3', [join(MANIFESTS, script), MARKER], {
    cwd: workspace,
    input,
    encoding: 'utf8',
    timeout: 10_000,
    env: { PATH: process.env['PATH'] ?? '', TOOLHOST_TEST_MARKER: MARKER },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('delete_path (one-shot process tool)', () => {
  it('deletes a file and answers one JSON value', () => {
    write('gone.txt', 'x');
    const result = runPython('delete_path.py', JSON.stringify({ path: 'gone.txt' }));
    expect(result).toMatchObject({ status: 0, stdout: '{"path": "gone.txt", "type": "file"}' });
    expect(existsSync(join(workspace, 'gone.txt'))).toBe(false);
  });

  it('needs recursive for a non-empty folder', () => {
    write('dir/a.txt', 'a');
    expect(runPython('delete_path.py', JSON.stringify({ path: 'dir' }))).toMatchObject({ status: 1, stderr: expect.stringContaining('pass recursive: true') });
    expect(runPython('delete_path.py', JSON.stringify({ path: 'dir', recursive: true }))).toMatchObject({ status: 0, stdout: '{"path": "dir", "type": "directory"}' });
    expect(existsSync(join(workspace, 'dir'))).toBe(false);
  });

  it('deletes a symlink itself, never its target', () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-outside-')));
    try {
      writeFileSync(join(outside, 'precious.txt'), 'keep');
      symlinkSync(outside, join(workspace, 'link'));
      expect(runPython('delete_path.py', JSON.stringify({ path: 'link', recursive: true }))).toMatchObject({ status: 0, stdout: '{"path": "link", "type": "symlink"}' });
      expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('keep');
      // Through the link is outside the workspace.
      symlinkSync(outside, join(workspace, 'link2'));
      expect(runPython('delete_path.py', JSON.stringify({ path: 'link2/precious.txt' }))).toMatchObject({ status: 1, stderr: expect.stringContaining('outside the workspace') });
      expect(existsSync(join(outside, 'precious.txt'))).toBe(true);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it.each(['.', 'sub/..', './', '..', '../x', '/etc/hostname'])('refuses %s (the root itself or outside it)', (path) => {
    write('sub/keep.txt', 'k');
    const result = runPython('delete_path.py', JSON.stringify({ path }));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/workspace root itself|outside the workspace|relative to the workspace root/);
    expect(existsSync(join(workspace, 'sub/keep.txt'))).toBe(true);
  });
});

describe('text_stats (persistent NDJSON process tool)', () => {
  it('answers each request line with its id, errors included, and exits at end of input', async () => {
    write('a.txt', 'one two\nthree\n');
    write('b.txt', 'no newline');
    const child = spawn('python3', [join(MANIFESTS, 'text_stats.py'), MARKER], { cwd: workspace, stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '' } });
    const lines = createInterface({ input: child.stdout });
    const answers: unknown[] = [];
    const done = new Promise<number | null>((resolve) => child.on('close', resolve));
    lines.on('line', (line) => answers.push(JSON.parse(line)));
    child.stdin.write(`${JSON.stringify({ id: 1, args: { path: 'a.txt' } })}\n`);
    child.stdin.write(`${JSON.stringify({ id: 'two', args: { path: 'b.txt' } })}\n`);
    child.stdin.write(`${JSON.stringify({ id: 3, args: { path: '../outside.txt' } })}\n`);
    child.stdin.end(`${JSON.stringify({ id: 4, args: { path: 'missing.txt' } })}\n`);
    expect(await done).toBe(0);
    expect(answers).toEqual([
      { id: 1, result: { path: 'a.txt', lines: 2, words: 3, chars: 14, bytes: 14 } },
      { id: 'two', result: { path: 'b.txt', lines: 1, words: 2, chars: 10, bytes: 10 } },
      { id: 3, error: { message: 'path is outside the workspace' } },
      { id: 4, error: { message: 'missing.txt is not a file' } },
    ]);
  });
});
