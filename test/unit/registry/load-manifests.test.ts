import { mkdtempSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Problem } from '../../../src/config/problem.js';
import { loadManifests, MAX_MANIFEST_BYTES } from '../../../src/registry/load-manifests.js';

const REPO = realpathSync(fileURLToPath(new URL('../../../', import.meta.url)));
const FIXTURES = 'test/fixtures/manifests';

function load(...dirs: string[]) {
  return loadManifests({ dirs, workspace: REPO, cwd: REPO });
}

function bad(name: string) {
  return load(`${FIXTURES}/bad/${name}`);
}

/** The one problem whose reason contains `reason` (fails when there is none or several). */
function problemWith(problems: readonly Problem[], reason: string): Problem {
  const found = problems.filter((problem) => problem.reason.includes(reason));
  expect(found, `problems: ${JSON.stringify(problems, null, 2)}`).toHaveLength(1);
  return found[0] as Problem;
}

// [fixture folder, manifest file inside it, line, col, stable part of the reason]
const REFUSALS: readonly (readonly [string, string, number, number, string])[] = [
  ['invalid-yaml', 'tool.yaml', 3, 1, 'invalid YAML'],
  ['duplicate-key', 'tool.yaml', 11, 1, 'duplicate key'],
  ['unknown-key', 'tool.yaml', 7, 3, 'unknown key "sandbox.memoryMB" (did you mean "memoryMb"?)'],
  ['unknown-key', 'tool.yaml', 12, 1, 'unknown key "timeout" (did you mean "timeoutMs"?)'],
  ['bad-name', 'tool.yaml', 1, 7, 'name "Read-File" must be a lowercase letter followed by at most 63 lowercase letters, digits or underscores'],
  ['missing-timeout', 'tool.yaml', 1, 1, 'missing required key "timeoutMs"'],
  ['zero-timeout', 'tool.yaml', 4, 12, 'timeoutMs must be >= 1 (got 0)'],
  ['unknown-side-effect', 'tool.yaml', 3, 13, 'sideEffect must be one of read_only, local_mutation, remote_mutation, destructive'],
  ['unknown-mode', 'tool.yaml', 6, 9, 'sandbox.mode must be one of isolate, worker, process'],
  ['entry-dotdot', 'inner/tool.yaml', 7, 8, 'entry "../outside.js" resolves outside the manifest folder'],
  ['entry-absolute', 'tool.yaml', 7, 8, 'entry "/usr/lib/node_modules/tool.js" is an absolute path'],
  ['entry-not-module', 'tool.yaml', 7, 8, 'entry "./tool.py" must be a .js or .mjs file'],
  ['command-dotdot', 'inner/tool.yaml', 7, 24, 'command[1] "../outside.py" resolves outside the manifest folder'],
  ['command-absolute', 'tool.yaml', 7, 13, 'command[0] "/bin/sh" must be a program name found on PATH'],
  ['process-with-entry', 'tool.yaml', 8, 1, 'key "entry" is not allowed when sandbox.mode is process'],
  ['isolate-with-process-keys', 'tool.yaml', 7, 3, 'key "sandbox.isolation" is not allowed when sandbox.mode is isolate or worker'],
  ['isolate-with-process-keys', 'tool.yaml', 1, 1, 'missing required key "entry" when sandbox.mode is isolate or worker'],
  ['pool-size-without-persistent', 'tool.yaml', 8, 3, 'key "sandbox.poolSize" is not allowed unless sandbox.persistent is true'],
  ['read-only-write-root', 'tool.yaml', 14, 15, 'a read_only tool may not have a read_write root'],
  ['root-relative', 'tool.yaml', 13, 13, 'root path "docs" must be absolute'],
  ['root-unknown-variable', 'tool.yaml', 13, 13, 'uses unknown variable ${HOME}'],
  ['input-not-object', 'tool.yaml', 9, 9, 'input schema is not an object schema'],
  ['input-does-not-compile', 'tool.yaml', 14, 7, 'input schema: unknown keyword "maxLenght" (did you mean "maxLength"?)'],
  ['input-too-deep', 'tool.yaml', 105, 131, 'input schema nests deeper than 64 levels'],
  ['ref-relative-file', 'tool.yaml', 13, 13, '$ref "./secret.json" refers outside itself'],
  ['ref-file-url', 'tool.yaml', 13, 13, '$ref "file:///etc/passwd" refers outside itself'],
  ['ref-http', 'tool.yaml', 13, 13, '$ref "https://example.com/schema.json" refers outside itself'],
  ['output-ref-outside', 'tool.yaml', 15, 13, 'output schema: $ref "../ref-relative-file/secret.json" refers outside itself'],
  ['id-outside', 'tool.yaml', 11, 8, '$id "https://example.com/tool.json" refers outside itself'],
  ['schema-draft-04', 'tool.yaml', 11, 12, '$schema "http://json-schema.org/draft-04/schema#" is not a standard draft'],
  ['pattern-without-max-length', 'tool.yaml', 14, 16, 'a pattern needs a maxLength'],
  ['not-a-mapping', 'tool.yaml', 1, 1, 'a manifest must be a YAML mapping'],
];

describe('loadManifests refuses bad manifest files', () => {
  it.each(REFUSALS)('%s: %s:%i:%i %s', (folder, file, line, col, reason) => {
    const result = bad(folder);
    expect(result.manifests).toEqual([]);
    expect(problemWith(result.problems, reason)).toEqual({ file: `${FIXTURES}/bad/${folder}/${file}`, line, col, reason: expect.stringContaining(reason) });
  });

  it('reports every problem of a file at once, in line order', () => {
    const result = bad('many-problems');
    expect(result.manifests).toEqual([]);
    const file = `${FIXTURES}/bad/many-problems/tool.yaml`;
    expect(result.problems.map(({ line, col }) => [line, col])).toEqual([
      [1, 7],
      [3, 13],
      [4, 12],
      [5, 1],
      [8, 8],
      [10, 9],
    ]);
    expect(result.problems.every((problem) => problem.file === file)).toBe(true);
    expect(result.problems.map((problem) => problem.reason)).toEqual([
      expect.stringContaining('name "Many-Problems" must be a lowercase letter'),
      expect.stringContaining('sideEffect must be one of'),
      expect.stringContaining('timeoutMs must be >= 1 (got -5)'),
      'unknown key "colour"',
      expect.stringContaining('resolves outside the manifest folder'),
      expect.stringContaining('input schema is not an object schema'),
    ]);
  });

  it('refuses a name declared in two folders in both files, and loads neither', () => {
    const result = load(`${FIXTURES}/bad/duplicate-name/first`, `${FIXTURES}/bad/duplicate-name/second`);
    const first = `${FIXTURES}/bad/duplicate-name/first/tool.yaml`;
    const second = `${FIXTURES}/bad/duplicate-name/second/tool.yaml`;
    expect(result.manifests).toEqual([]);
    expect(result.problems).toEqual([
      { file: first, line: 1, col: 7, reason: `duplicate tool name "twin": also declared in ${second}` },
      { file: second, line: 1, col: 7, reason: `duplicate tool name "twin": also declared in ${first}` },
    ]);
  });

  it('finds a clash even when one of the files has other problems', () => {
    const result = load(`${FIXTURES}/bad/duplicate-name-with-other-problem`);
    const first = `${FIXTURES}/bad/duplicate-name-with-other-problem/first/tool.yaml`;
    const second = `${FIXTURES}/bad/duplicate-name-with-other-problem/second/tool.yaml`;
    expect(result.manifests).toEqual([]);
    expect(result.problems).toEqual([
      { file: first, line: 1, col: 7, reason: `duplicate tool name "twin_too": also declared in ${second}` },
      { file: second, line: 1, col: 7, reason: `duplicate tool name "twin_too": also declared in ${first}` },
      { file: second, line: 4, col: 12, reason: 'timeoutMs must be >= 1 (got 0)' },
    ]);
  });

  it('does not make a file collide with itself when folders overlap', () => {
    const result = load(`${FIXTURES}/good/defaults`, `${FIXTURES}/good`);
    expect(result.problems).toEqual([]);
    expect(result.manifests.filter((manifest) => manifest.name === 'plain_tool')).toHaveLength(1);
  });

  it('reports a manifest folder that does not exist', () => {
    const result = load(`${FIXTURES}/no-such-folder`);
    expect(result.problems).toEqual([{ file: `${FIXTURES}/no-such-folder`, line: 1, col: 1, reason: 'manifest folder does not exist' }]);
  });
});

describe('loadManifests refuses paths that escape through a symlink', () => {
  let temp = '';
  afterEach(() => {
    if (temp) rmSync(temp, { recursive: true, force: true });
    temp = '';
  });

  function makeToolFolder(): { dir: string; outside: string } {
    temp = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-manifests-')));
    const dir = join(temp, 'tool');
    const outside = join(temp, 'outside');
    mkdirSync(dir);
    mkdirSync(outside);
    writeFileSync(join(outside, 'evil.js'), 'export default async function () { return 1; }\n');
    writeFileSync(join(outside, 'evil.py'), 'print("{}")\n');
    return { dir, outside };
  }

  it('refuses an entry that is a symlink to a file outside the manifest folder', () => {
    const { dir, outside } = makeToolFolder();
    symlinkSync(join(outside, 'evil.js'), join(dir, 'tool.js'));
    cpSync(join(REPO, FIXTURES, 'good/defaults/tool.yaml'), join(dir, 'tool.yaml'));
    const result = loadManifests({ dirs: [dir], workspace: temp, cwd: temp });
    expect(result.manifests).toEqual([]);
    expect(result.problems).toEqual([{ file: 'tool/tool.yaml', line: 7, col: 8, reason: 'entry "./tool.js" resolves outside the manifest folder through a symlink' }]);
  });

  it('refuses an entry under a symlinked folder that leads outside', () => {
    const { dir, outside } = makeToolFolder();
    symlinkSync(outside, join(dir, 'lib'));
    writeFileSync(join(dir, 'tool.yaml'), 'name: linked\ndescription: d\ntimeoutMs: 5\nsandbox:\n  mode: worker\nentry: ./lib/evil.js\ninput:\n  type: object\n');
    const result = loadManifests({ dirs: [dir], workspace: temp, cwd: temp });
    expect(result.problems).toEqual([{ file: 'tool/tool.yaml', line: 6, col: 8, reason: 'entry "./lib/evil.js" resolves outside the manifest folder through a symlink' }]);
  });

  it('refuses a command path that is a symlink to a file outside the manifest folder', () => {
    const { dir, outside } = makeToolFolder();
    symlinkSync(join(outside, 'evil.py'), join(dir, 'tool.py'));
    writeFileSync(join(dir, 'tool.yaml'), 'name: linked\ndescription: d\ntimeoutMs: 5\nsandbox:\n  mode: process\n  command: [python3, ./tool.py]\ninput:\n  type: object\n');
    const result = loadManifests({ dirs: [dir], workspace: temp, cwd: temp });
    expect(result.problems).toEqual([{ file: 'tool/tool.yaml', line: 6, col: 22, reason: 'command[1] "./tool.py" resolves outside the manifest folder through a symlink' }]);
  });

  it('refuses a manifest larger than 1 MiB unread', () => {
    const { dir } = makeToolFolder();
    writeFileSync(join(dir, 'huge.yaml'), `# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n`);
    expect(loadManifests({ dirs: [dir], workspace: temp, cwd: temp }).problems).toEqual([
      { file: 'tool/huge.yaml', line: 1, col: 1, reason: `manifest is ${MAX_MANIFEST_BYTES + 3} bytes; the limit is ${MAX_MANIFEST_BYTES}` },
    ]);
  });

  it('resolves a symlinked workspace root to its real path', () => {
    const { dir, outside } = makeToolFolder();
    const link = join(temp, 'workspace-link');
    symlinkSync(outside, link);
    cpSync(join(REPO, FIXTURES, 'good/defaults/tool.js'), join(dir, 'tool.js'));
    writeFileSync(
      join(dir, 'tool.yaml'),
      'name: rooted\ndescription: d\ntimeoutMs: 5\nsandbox:\n  mode: isolate\nentry: ./tool.js\nworkspace:\n  roots:\n    - { path: "${WORKSPACE}", access: read }\ninput:\n  type: object\n',
    );
    const result = loadManifests({ dirs: [dir], workspace: 'workspace-link', cwd: temp });
    expect(result.problems).toEqual([]);
    expect(result.manifests[0]?.roots).toEqual([{ declared: '${WORKSPACE}', path: outside, access: 'read' }]);
  });
});

describe('loadManifests scans folders as people lay them out', () => {
  let temp = '';
  afterEach(() => {
    if (temp) rmSync(temp, { recursive: true, force: true });
    temp = '';
  });

  it('skips node_modules/ and dot folders below a manifest folder (their YAML is CI workflows, funding notes, editor state)', () => {
    temp = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-scan-')));
    const servers = join(temp, 'servers');
    const tool = 'name: kept\ndescription: d\ntimeoutMs: 5\nsandbox:\n  mode: worker\nentry: ./tool.js\ninput:\n  type: object\n';
    for (const folder of ['', 'nested']) {
      mkdirSync(join(servers, folder), { recursive: true });
    }
    writeFileSync(join(servers, 'nested', 'tool.js'), 'export default async () => 1;\n');
    writeFileSync(join(servers, 'nested', 'tool.yaml'), tool);
    // What `npm install` and git put beside a manifest: none of it is a manifest.
    for (const [path, text] of [
      ['node_modules/some-package/.github/workflows/ci.yml', 'on: push\njobs: {}\n'],
      ['node_modules/some-package/FUNDING.yml', 'github: someone\n'],
      ['node_modules/@scope/pkg/deep/tool.yaml', tool.replace('kept', 'from_node_modules')],
      ['.github/workflows/ci.yml', 'on: push\n'],
      ['.cache/x.yaml', 'not: [a manifest\n'],
      ['nested/.hidden/tool.yaml', tool.replace('kept', 'hidden_folder')],
    ] as const) {
      mkdirSync(join(servers, path, '..'), { recursive: true });
      writeFileSync(join(servers, path), text);
    }
    const result = loadManifests({ dirs: [servers], workspace: temp, cwd: temp });
    expect(result.problems).toEqual([]);
    expect(result.manifests.map((manifest) => manifest.name)).toEqual(['kept']);
  });

  it('scans a dot folder named as the manifest folder itself', () => {
    temp = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-scan-')));
    const dir = join(temp, '.toolhost-manifests');
    mkdirSync(dir);
    writeFileSync(join(dir, 'tool.js'), 'export default async () => 1;\n');
    writeFileSync(join(dir, 'tool.yaml'), 'name: dotted\ndescription: d\ntimeoutMs: 5\nsandbox:\n  mode: worker\nentry: ./tool.js\ninput:\n  type: object\n');
    expect(loadManifests({ dirs: [dir], workspace: temp, cwd: temp }).manifests.map((manifest) => manifest.name)).toEqual(['dotted']);
  });
});
