// The bundled isolate tools (manifests/) run on the isolate runner with the
// ctx shapes they rely on: fs.list entries, fs.stat, fs.writeText, fetch.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createIsolateRunner } from '../../../src/runner/isolate/isolate-runner.js';
import type { Runner, WorkspaceRoot } from '../../../src/runner/types.js';
import { createSilentLogger } from '../../../src/log.js';
import { recordingOptions, root } from '../../helpers/fixture-runners.js';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.js';
import { jsonOf } from '../../helpers/run-outcomes.js';
import { runSpec } from '../../helpers/run-spec.js';
import { useProcessServices } from '../../helpers/process-services.js';

const services = useProcessServices();

const MANIFESTS = fileURLToPath(new URL('../../../manifests/', import.meta.url));
const logger = createSilentLogger();
const runners: Runner[] = [];
let workspace: TempDir;
const README = 'line one\nneedle here\nline three\n';
const MAIN_JS = 'const needle = 1;\n';

function bundled(file: string, mode: 'isolate', roots: WorkspaceRoot[]): Runner {
  const entryPath = path.join(MANIFESTS, file);
  const spec = runSpec({ name: path.basename(file).replace(/\.m?js$/, ''), mode, manifestDir: path.dirname(entryPath), entryPath, roots });
  const runner = createIsolateRunner(spec, { logger, services });
  runners.push(runner);
  return runner;
}

beforeAll(async () => {
  workspace = makeTempDir('toolhost-bundled-');
  await mkdir(path.join(workspace.path, 'src', 'lib'), { recursive: true });
  await writeFile(path.join(workspace.path, 'README.md'), README);
  await writeFile(path.join(workspace.path, 'src', 'main.js'), MAIN_JS);
  await writeFile(path.join(workspace.path, 'src', 'lib', 'util.js'), 'export {};\n');
});
afterAll(async () => {
  workspace.remove();
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.close()));
});

describe('bundled tools on the isolate runner', () => {
  it('read_file reads lines', async () => {
    const runner = bundled('read_file.js', 'isolate', [root(workspace.path, 'read')]);
    const result = jsonOf(await runner.run({ callId: 'r', args: { path: 'README.md', startLine: 2, maxLines: 1 } }, recordingOptions()));
    expect(result).toEqual({ path: 'README.md', text: 'needle here', startLine: 2, endLine: 2, totalLines: 3, truncated: true });
  });

  it('list_dir walks with fs.list entries', async () => {
    const runner = bundled('list_dir.js', 'isolate', [root(workspace.path, 'read')]);
    const result = jsonOf(await runner.run({ callId: 'l', args: { path: '.', depth: 2 } }, recordingOptions()));
    expect(result).toEqual({
      path: '.',
      entries: [
        { path: 'README.md', type: 'file', size: Buffer.byteLength(README) },
        { path: 'src', type: 'directory', size: 0 },
        { path: 'src/lib', type: 'directory', size: 0 },
        { path: 'src/main.js', type: 'file', size: Buffer.byteLength(MAIN_JS) },
      ],
      truncated: false,
    });
  });

  it('search_text finds matches across files', async () => {
    const runner = bundled('search_text.js', 'isolate', [root(workspace.path, 'read')]);
    const result = jsonOf(await runner.run({ callId: 's', args: { query: 'needle' } }, recordingOptions()));
    expect(result).toEqual({
      matches: [
        { path: 'README.md', line: 2, column: 1, text: 'needle here' },
        { path: 'src/main.js', line: 1, column: 7, text: 'const needle = 1;' },
      ],
      filesSearched: 3,
      truncated: false,
    });
  });

  it('write_file creates a file in a read_write root and is refused in a read root', async () => {
    const writer = bundled('write_file.js', 'isolate', [root(workspace.path, 'read_write')]);
    const created = jsonOf(await writer.run({ callId: 'w', args: { path: 'out/new.txt', text: 'héllo' } }, recordingOptions()));
    expect(created).toEqual({ path: 'out/new.txt', bytes: 6, created: true });
    expect(await readFile(path.join(workspace.path, 'out', 'new.txt'), 'utf8')).toBe('héllo');

    const readOnly = bundled('write_file.js', 'isolate', [root(workspace.path, 'read')]);
    const options = recordingOptions();
    const refused = await readOnly.run({ callId: 'w2', args: { path: 'out/other.txt', text: 'x' } }, options);
    expect(refused).toMatchObject({ ok: false, code: 'tool_error', details: { errorCode: 'policy_denied' } });
    expect(options.denials).toMatchObject([{ op: 'writeText', reason: 'read_only_root' }]);
  });

  it("hash_file hashes through ctx.fs, the same digest as Node's crypto", async () => {
    const runner = bundled('hash_file.mjs', 'isolate', [root(workspace.path, 'read')]);
    const result = jsonOf(await runner.run({ callId: 'h', args: { path: 'README.md' } }, recordingOptions()));
    const text = await readFile(path.join(workspace.path, 'README.md'));
    expect(result).toEqual({
      path: 'README.md',
      algorithm: 'sha256',
      digest: createHash('sha256').update(text).digest('hex'),
      bytes: text.length,
    });
  });
});
