// `effects` in manifests and server entries (SPEC section 2): the written-path
// arguments and the content argument, checked at load with file:line:col,
// inferred only by name, and carried to each upstream tool of a server.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createToolSchemaCompiler } from '../../../src/registry/ajv.js';
import { loadManifests } from '../../../src/registry/load-manifests.js';
import { normalizeEffects } from '../../../src/registry/manifest-effects.js';
import { buildServerTools } from '../../../src/registry/server-tools.js';

const temp = mkdtempSync(join(tmpdir(), 'toolhost-effects-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function loadTool(effects: string, properties = 'path: { type: string, maxLength: 100 }\n    text: { type: string, maxLength: 100 }\n    mode: { type: integer }') {
  const dir = mkdtempSync(join(temp, 'm-'));
  writeFileSync(join(dir, 'tool.js'), 'export default async function () { return 1; }\n');
  mkdirSync(join(dir, 'ws'));
  writeFileSync(
    join(dir, 'tool.yaml'),
    `name: writer
description: Writes.
sideEffect: local_mutation
timeoutMs: 1000
sandbox: { mode: isolate }
entry: ./tool.js
${effects}
input:
  type: object
  properties:
    ${properties}
`,
  );
  return loadManifests({ dirs: [dir], workspace: join(dir, 'ws'), cwd: dir });
}

describe('effects in a tool manifest', () => {
  it('writes with an explicit content argument', () => {
    const loaded = loadTool('effects: { writes: [path], content: text }');
    expect(loaded.problems).toEqual([]);
    expect(loaded.manifests[0]?.effects).toEqual({ writes: ['path'], content: 'text' });
  });

  it('infers the content argument by name (text or content) only, and only for one written path', () => {
    expect(loadTool('effects: { writes: [path] }').manifests[0]?.effects).toEqual({ writes: ['path'], content: 'text' });
    // move_file(source, destination): another string argument is not the new text.
    const move = loadTool('effects: { writes: [destination] }', 'source: { type: string, maxLength: 9 }\n    destination: { type: string, maxLength: 9 }');
    expect(move.manifests[0]?.effects).toEqual({ writes: ['destination'], content: null });
    const two = loadTool(
      'effects: { writes: [path, other] }',
      'path: { type: string, maxLength: 9 }\n    other: { type: string, maxLength: 9 }\n    text: { type: string, maxLength: 9 }',
    );
    expect(two.manifests[0]?.effects).toEqual({ writes: ['path', 'other'], content: null });
    expect(loadTool('effects: { writes: [path], content: null }').manifests[0]?.effects).toEqual({ writes: ['path'], content: null });
    expect(loadTool('').manifests[0]?.effects).toBeUndefined();
  });

  it.each([
    ['effects: { writes: [pth] }', 'effects.writes', /"pth" is not an argument/],
    ['effects: { writes: [mode] }', 'effects.writes', /must be a string argument/],
    ['effects: { writes: [path], content: body }', 'effects.content', /"body" is not an argument/],
    ['effects: { writes: [path], content: path }', 'effects.content', /named as a written path too/],
  ])('%s is refused at file:line:col', (effects, _key, reason) => {
    const loaded = loadTool(effects);
    expect(loaded.manifests).toEqual([]);
    expect(loaded.problems).toEqual([expect.objectContaining({ file: 'tool.yaml', line: 7, reason: expect.stringMatching(reason) })]);
    expect(loaded.problems[0]?.col).toBeGreaterThan(1);
  });

  it.each([['effects: { writes: [] }'], ['effects: { content: text }'], ['effects: { writes: [path], reads: [path] }'], ['effects: { writes: path }']])(
    'the schema refuses %s',
    (effects) => {
      const loaded = loadTool(effects);
      expect(loaded.manifests).toEqual([]);
      expect(loaded.problems.length).toBeGreaterThan(0);
    },
  );
});

describe('effects in a server tools: entry', () => {
  it('each matched tool gets them, its content argument inferred from its own listed schema', () => {
    const dir = mkdtempSync(join(temp, 's-'));
    writeFileSync(join(dir, 'server.mjs'), '');
    mkdirSync(join(dir, 'ws'));
    writeFileSync(
      join(dir, 'srv.yaml'),
      `kind: Server
name: fs
description: A server.
command: ["node", "./server.mjs"]
workspace:
  roots: [{ path: "\${WORKSPACE}", access: read_write }]
timeoutMs: 1000
tools:
  "write_*": { sideEffect: local_mutation, effects: { writes: [path] } }
  edit_file: { sideEffect: local_mutation, effects: { writes: [path], content: null } }
`,
    );
    const loaded = loadManifests({ dirs: [dir], workspace: join(dir, 'ws'), cwd: dir });
    expect(loaded.problems).toEqual([]);
    const [server] = loaded.servers;
    if (!server) throw new Error('no server');
    const stringProperty = { type: 'string' };
    const built = buildServerTools(
      server,
      {
        ok: true,
        truncated: false,
        tools: [
          { name: 'write_file', inputSchema: { type: 'object', properties: { path: stringProperty, content: stringProperty } } },
          { name: 'write_note', inputSchema: { type: 'object', properties: { path: stringProperty, body: stringProperty } } },
          { name: 'edit_file', inputSchema: { type: 'object', properties: { path: stringProperty, content: stringProperty } } },
        ],
      },
      createToolSchemaCompiler(),
    );
    const effects = Object.fromEntries(built.manifests.map((manifest) => [manifest.name, manifest.effects]));
    expect(effects).toEqual({
      fs__write_file: { writes: ['path'], content: 'content' },
      fs__write_note: { writes: ['path'], content: null },
      fs__edit_file: { writes: ['path'], content: null },
    });
  });

  it('normalizeEffects ignores what is not an effects mapping', () => {
    expect(normalizeEffects(undefined, {})).toBeUndefined();
    expect(normalizeEffects({ writes: 'path' }, {})).toBeUndefined();
  });
});
