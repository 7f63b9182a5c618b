// kind: Server manifests (SPEC section 2.1): problems at file:line:col like tool
// manifests, entry matching (exact beats glob, longer glob beats shorter),
// listed names, and the listing → tools step with its exclusions.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createToolSchemaCompiler } from '../../../src/registry/ajv.js';
import { loadManifests } from '../../../src/registry/load-manifests.js';
import { listedToolName, matchToolEntry, type ServerToolEntry } from '../../../src/registry/server-manifest.js';
import { INSTANCES_REQUIRED_REASON } from '../../../src/registry/load-server-manifest.js';
import { buildServerTools, MAX_UPSTREAM_META_BYTES, REDACTED_NAME, type ListedUpstreamTool } from '../../../src/registry/server-tools.js';

const temp = mkdtempSync(join(tmpdir(), 'toolhost-server-manifest-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function load(yaml: string) {
  const dir = mkdtempSync(join(temp, 'm-'));
  writeFileSync(join(dir, 'server.mjs'), '');
  writeFileSync(join(dir, 'srv.yaml'), yaml);
  mkdirSync(join(dir, 'ws'));
  return loadManifests({ dirs: [dir], workspace: join(dir, 'ws'), cwd: dir });
}

const GOOD = `kind: Server
name: fs
description: A server.
command: ["node", "./server.mjs", "\${WORKSPACE}"]
workspace:
  roots: [{ path: "\${WORKSPACE}", access: read_write }]
timeoutMs: 1000
tools:
  read_file: { sideEffect: read_only }
  "*": { hidden: true }
`;

describe('loading kind: Server manifests', () => {
  it('loads a good one beside tool manifests, ${WORKSPACE} substituted in arguments', () => {
    const loaded = load(GOOD);
    expect(loaded.problems).toEqual([]);
    expect(loaded.manifests).toEqual([]);
    expect(loaded.servers).toHaveLength(1);
    const [server] = loaded.servers;
    expect(server?.command[2]).toMatch(/\/ws$/);
    expect(server?.isolation).toBe('namespace');
    expect(server?.tools.map((entry) => entry.pattern)).toEqual(['read_file', '*']);
  });

  it.each([
    ['an unknown key', GOOD.replace('timeoutMs: 1000', 'timeoutMs: 1000\nretries: 3'), 8, 1, 'unknown key "retries"'],
    ['a bad server name', GOOD.replace('name: fs', 'name: Fs_1'), 2, 7, 'name'],
    [
      'an unknown entry key',
      GOOD.replace('read_file: { sideEffect: read_only }', 'read_file: { sideEffect: read_only, trusted: true }'),
      9,
      39,
      'unknown key "tools.read_file.trusted"',
    ],
    ['an unknown class', GOOD.replace('sideEffect: read_only', 'sideEffect: harmless'), 9, 28, 'sideEffect'],
    ['a command outside the folder', GOOD.replace('./server.mjs', '../server.mjs'), 4, 19, 'resolves outside the manifest folder'],
    ['a program with a slash', GOOD.replace('"node"', '"/usr/bin/node"'), 4, 11, 'must be a program name found on PATH'],
  ])('refuses %s with file:line:col', (_what, yaml, line, col, reason) => {
    const { problems, servers } = load(yaml);
    expect(servers).toEqual([]);
    expect(problems).toEqual([expect.objectContaining({ file: 'srv.yaml', line, col, reason: expect.stringContaining(reason) })]);
  });
});

describe('matchToolEntry', () => {
  const entry = (pattern: string): ServerToolEntry => ({ pattern, hidden: false });
  const entries = [entry('*'), entry('read_*'), entry('read_text_*'), entry('read_text_file'), entry('*_file')];
  it.each([
    ['read_text_file', 'read_text_file'],
    ['read_text_blob', 'read_text_*'],
    ['read_media', 'read_*'],
    ['write_file', '*_file'],
    ['move', '*'],
  ])('%s takes %s', (name, pattern) => {
    expect(matchToolEntry(entries, name)?.pattern).toBe(pattern);
  });
  it('matches nothing without a catch-all', () => {
    expect(matchToolEntry([entry('read_*')], 'write')).toBeUndefined();
  });
});

describe('listedToolName', () => {
  it.each([
    ['read_file', 'fs__read_file'],
    ['get-tiny-image', 'fs__get_tiny_image'],
    ['Odd Name!', 'fs__odd_name_'],
    ['x'.repeat(60), `fs__${'x'.repeat(60)}`],
    ['x'.repeat(61), undefined],
    ['', undefined],
  ])('%s → %s', (tool, listed) => {
    expect(listedToolName('fs', tool)).toBe(listed);
  });
});

describe('buildServerTools', () => {
  const [server] = load(GOOD).servers;
  if (!server) throw new Error('no server');
  it('classifies from the entries, never from the hints, and gives read_only tools read-only roots', () => {
    const built = buildServerTools(
      {
        ...server,
        tools: [
          { pattern: 'read_file', sideEffect: 'read_only', hidden: false },
          { pattern: 'write_*', sideEffect: 'local_mutation', hidden: false },
          { pattern: 'secret', hidden: true },
        ],
      },
      {
        ok: true,
        truncated: false,
        tools: [
          { name: 'read_file', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: true } },
          { name: 'write_file', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
          { name: 'secret', inputSchema: { type: 'object' } },
          { name: 'other', inputSchema: { type: 'object' } },
        ],
      },
      createToolSchemaCompiler(),
    );
    const byName = new Map(built.manifests.map((manifest) => [manifest.name, manifest]));
    expect(byName.get('fs__read_file')).toMatchObject({
      sideEffect: 'read_only',
      roots: [{ access: 'read' }],
      upstream: { tool: 'read_file', entry: 'read_file', hints: { readOnlyHint: false } },
    });
    expect(byName.get('fs__write_file')).toMatchObject({ sideEffect: 'local_mutation', roots: [{ access: 'read_write' }] });
    expect(byName.get('fs__other')?.sideEffect).toBeUndefined();
    expect(byName.has('fs__secret')).toBe(false);
    expect(built.report.tools.find((tool) => tool.upstream === 'secret')?.excluded).toMatch(/hidden/);
  });
});

describe('schemas/manifest.schema.json covers both kinds (for editors)', () => {
  it('accepts the bundled server example and a tool manifest, and refuses a server key in a tool', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    const { manifestSchemaPath } = await import('../../../src/registry/manifest-schema.js');
    // As an editor reads the whole file (both kinds), not the branches toolhost validates with.
    const validate = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(manifestSchemaPath(), 'utf8')) as Record<string, unknown>);
    const root = new URL('../../../', import.meta.url);
    expect(validate(parse(readFileSync(new URL('manifests/servers/fs.yaml', root), 'utf8')))).toBe(true);
    const tool = parse(readFileSync(new URL('manifests/read_file.yaml', root), 'utf8')) as Record<string, unknown>;
    expect(validate(tool)).toBe(true);
    expect(validate({ ...tool, tools: {} })).toBe(false);
  });
});

describe('upstream schemas on the host', () => {
  it("validates without a server's unbounded pattern (no regex of theirs on an unbounded string of the caller's)", async () => {
    const { checkUpstreamSchema, withoutUnboundedPatterns } = await import('../../../src/registry/schema-checks.js');
    const schema = { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' }, b: { type: 'string', pattern: '^b+$', maxLength: 8 } } };
    expect(withoutUnboundedPatterns(schema)).toEqual({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string', pattern: '^b+$', maxLength: 8 } } });
    const checked = checkUpstreamSchema(schema, 'input', createToolSchemaCompiler());
    if (!checked.ok) throw new Error(checked.reason);
    expect(checked.validate({ a: `${'a'.repeat(50_000)}!` })).toBe(true);
    expect(checked.validate({ b: 'c' })).toBe(false);
  });
});

describe('instances: split | one', () => {
  const BOTH = GOOD.replace('  "*": { hidden: true }', '  write_file: { sideEffect: local_mutation }\n  "*": { hidden: true }');
  const listing = {
    ok: true as const,
    truncated: false,
    tools: [
      { name: 'read_file', inputSchema: { type: 'object' } },
      { name: 'write_file', inputSchema: { type: 'object' } },
    ],
  };

  it('is required when the entries give read_only and other classes: a problem at tools: that explains the choice', () => {
    const { problems, servers } = load(BOTH);
    expect(servers).toEqual([]);
    expect(problems).toEqual([{ file: 'srv.yaml', line: 8, col: 1, reason: INSTANCES_REQUIRED_REASON }]);
    expect(INSTANCES_REQUIRED_REASON).toContain('instances: split');
    expect(INSTANCES_REQUIRED_REASON).toContain('instances: one');
  });

  it('is not required for one kind, nor counted for hidden or unclassified entries', () => {
    expect(load(GOOD).problems).toEqual([]);
    expect(load(GOOD.replace('  "*": { hidden: true }', '  write_file: { sideEffect: local_mutation, hidden: true }\n  other: {}')).problems).toEqual([]);
  });

  it('split: read_only tools run in an instance with read-only roots, held to the read-only class', () => {
    const [server] = load(BOTH.replace('timeoutMs: 1000', 'timeoutMs: 1000\ninstances: split')).servers;
    if (!server) throw new Error('no server');
    const byName = new Map(buildServerTools(server, listing, createToolSchemaCompiler()).manifests.map((manifest) => [manifest.name, manifest]));
    expect(byName.get('fs__read_file')).toMatchObject({ roots: [{ access: 'read' }], upstream: { instances: 'split' } });
    expect(byName.get('fs__write_file')).toMatchObject({ roots: [{ access: 'read_write' }], upstream: { instances: 'split' } });
  });

  it('one: every tool, read_only ones too, is served by the instance with the declared access', () => {
    const [server] = load(BOTH.replace('timeoutMs: 1000', 'timeoutMs: 1000\ninstances: one')).servers;
    if (!server) throw new Error('no server');
    expect(server.instances).toBe('one');
    const byName = new Map(buildServerTools(server, listing, createToolSchemaCompiler()).manifests.map((manifest) => [manifest.name, manifest]));
    // The class stays read_only (policy, approval, annotations); the roots are the server's.
    expect(byName.get('fs__read_file')).toMatchObject({ sideEffect: 'read_only', roots: [{ access: 'read_write' }], upstream: { instances: 'one' } });
  });
});

describe("what a server's listing may carry", () => {
  const [server] = load(GOOD.replace('  "*": { hidden: true }', '  "*": { sideEffect: read_only }')).servers;
  if (!server) throw new Error('no server');
  const build = (tools: readonly ListedUpstreamTool[], secretValues: string[] = []) =>
    buildServerTools(server, { ok: true, truncated: false, tools }, createToolSchemaCompiler(), { secretValues });

  it("keeps a tool's title and _meta (MCP Apps ui.resourceUri) as given, without the host's own keys", () => {
    const built = build([{ name: 'view', title: 'A view', inputSchema: { type: 'object' }, _meta: { ui: { resourceUri: 'ui://apps/view.html' }, 'toolhost/terminal': true } }]);
    expect(built.manifests[0]?.upstream).toMatchObject({ title: 'A view', meta: { ui: { resourceUri: 'ui://apps/view.html' } } });
    expect(built.manifests[0]?.upstream?.meta).not.toHaveProperty('toolhost/terminal');
  });

  it('drops a _meta that is too large or too deep, whole', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const built = build([
      { name: 'big', inputSchema: { type: 'object' }, _meta: { blob: 'x'.repeat(MAX_UPSTREAM_META_BYTES) } },
      { name: 'deep', inputSchema: { type: 'object' }, _meta: deep },
    ]);
    expect(built.manifests.map((manifest) => manifest.upstream?.meta)).toEqual([undefined, undefined]);
  });

  it("does not offer a tool whose name holds a secret's value, as written or as listed, and does not print the name", () => {
    const built = build(
      [
        { name: 'fine', inputSchema: { type: 'object' } },
        { name: 'leak_Hunter2-Secret-Value', inputSchema: { type: 'object' } },
        { name: 'LEAK_HUNTER2_SECRET_VALUE', inputSchema: { type: 'object' } },
      ],
      ['Hunter2-Secret-Value'],
    );
    expect(built.manifests.map((manifest) => manifest.name)).toEqual(['fs__fine']);
    const excluded = built.report.tools.filter((tool) => tool.excluded !== undefined);
    expect(excluded.map((tool) => [tool.upstream, tool.listed])).toEqual([
      [REDACTED_NAME, undefined],
      [REDACTED_NAME, undefined],
    ]);
    expect(JSON.stringify(built.report)).not.toMatch(/hunter2/i);
  });
});
