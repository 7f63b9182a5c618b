import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifests } from '../../../src/registry/load-manifests.js';
import { listManifestKeys, readManifestSchema } from '../../../src/registry/manifest-schema.js';
import { walkSubschemas } from '../../../src/registry/schema-checks.js';

const REPO = realpathSync(fileURLToPath(new URL('../../../', import.meta.url)));

describe('the bundled manifests', () => {
  const { manifests, problems } = loadManifests({ dirs: ['manifests'], workspace: REPO, cwd: REPO });
  const byName = new Map(manifests.map((manifest) => [manifest.name, manifest]));

  it('load with zero problems', () => {
    expect(problems).toEqual([]);
    expect([...byName.keys()].sort()).toEqual([
      'delete_path',
      'finish',
      'hash_file',
      'http_get',
      'json_format',
      'list_dir',
      'read_file',
      'search_text',
      'text_stats',
      'view_image',
      'write_file',
    ]);
  });

  it('declare the classes and sandboxes the product promises', () => {
    const facts = (name: string) => {
      const manifest = byName.get(name);
      return manifest && { sideEffect: manifest.sideEffect, mode: manifest.sandbox.mode, isolation: manifest.sandbox.isolation, access: manifest.roots.map((root) => root.access) };
    };
    expect(facts('read_file')).toEqual({ sideEffect: 'read_only', mode: 'isolate', isolation: 'none', access: ['read'] });
    expect(facts('list_dir')).toEqual({ sideEffect: 'read_only', mode: 'isolate', isolation: 'none', access: ['read'] });
    expect(facts('search_text')).toEqual({ sideEffect: 'read_only', mode: 'isolate', isolation: 'none', access: ['read'] });
    expect(facts('write_file')).toEqual({ sideEffect: 'local_mutation', mode: 'isolate', isolation: 'none', access: ['read_write'] });
    expect(facts('delete_path')).toEqual({ sideEffect: 'destructive', mode: 'process', isolation: 'namespace', access: ['read_write'] });
    expect(facts('http_get')).toEqual({ sideEffect: 'read_only', mode: 'isolate', isolation: 'none', access: [] });
    expect(facts('text_stats')).toEqual({ sideEffect: 'read_only', mode: 'process', isolation: 'namespace', access: ['read'] });
    expect(facts('hash_file')).toEqual({ sideEffect: 'read_only', mode: 'isolate', isolation: 'none', access: ['read'] });
    expect(facts('json_format')).toEqual({ sideEffect: 'read_only', mode: 'isolate', isolation: 'none', access: [] });
    expect(byName.get('http_get')?.networkAllow).toEqual(['api.github.com']);
    expect(byName.get('text_stats')?.sandbox).toMatchObject({ persistent: true, poolSize: 2, command: ['python3', join(REPO, 'manifests/text_stats.py')] });
    expect(byName.get('delete_path')?.sandbox).toMatchObject({ persistent: false, command: ['python3', join(REPO, 'manifests/delete_path.py')] });
    expect(byName.get('json_format')?.displayFile).toBe('manifests/community/json_format.yaml');
    // An approval of write_file shows the path it writes and a diff of its new text (SPEC section 2 effects).
    expect(byName.get('write_file')?.effects).toEqual({ writes: ['path'], content: 'text' });
  });

  it('have tight input schemas: no extra properties, every string bounded', () => {
    for (const manifest of manifests) {
      expect(manifest.input['additionalProperties'], manifest.name).toBe(false);
      walkSubschemas(manifest.input, ['input'], (node, path) => {
        if (node['type'] === 'string') expect(node['maxLength'], `${manifest.name} ${path.join('.')}`).toBeTypeOf('number');
      });
    }
  });

  it('isolate tools import nothing (an isolate has no module loader)', () => {
    for (const manifest of manifests.filter((m) => m.sandbox.mode === 'isolate')) {
      const code = readFileSync(manifest.entry ?? '', 'utf8');
      expect(code, manifest.name).not.toMatch(/^\s*import\b|\bimport\s*\(|\brequire\s*\(/m);
      expect(code, manifest.name).toMatch(/^export default async function/m);
    }
  });
});

describe('schemas/manifest.schema.json', () => {
  const schema = readManifestSchema();

  it('describes every key, so editors can show help while typing', () => {
    const undocumented: string[] = [];
    walkSubschemas(schema, [], (node, path) => {
      const properties = node['properties'];
      if (typeof properties !== 'object' || properties === null || path.includes('allOf')) return;
      for (const [key, child] of Object.entries(properties)) {
        if (typeof child !== 'object' || child === null || !('description' in child)) undocumented.push([...path, key].join('.'));
      }
    });
    expect(undocumented).toEqual([]);
  });

  it('lists every key of the format with its description and enum values', () => {
    const keys = listManifestKeys();
    expect(keys.map((key) => key.key)).toEqual([
      'name',
      'description',
      'sideEffect',
      'idempotent',
      'concurrencySafe',
      'timeoutMs',
      'sandbox',
      'sandbox.mode',
      'sandbox.memoryMb',
      'sandbox.command',
      'sandbox.stdout',
      'sandbox.isolation',
      'sandbox.persistent',
      'sandbox.poolSize',
      'sandbox.env',
      'entry',
      'workspace',
      'workspace.roots',
      'workspace.roots[].path',
      'workspace.roots[].access',
      'network',
      'network.allow',
      'limits',
      'limits.maxResultBytes',
      'format',
      'approval',
      'terminal',
      'effects',
      'effects.writes',
      'effects.content',
      'input',
      'output',
    ]);
    expect(keys.filter((key) => key.description.length < 10)).toEqual([]);
    expect(keys.filter((key) => key.required).map((key) => key.key)).toEqual([
      'name',
      'description',
      'timeoutMs',
      'sandbox',
      'sandbox.mode',
      'workspace.roots[].path',
      'workspace.roots[].access',
      'effects.writes',
      'input',
    ]);
    expect(keys.find((key) => key.key === 'sandbox.mode')?.values).toEqual(['isolate', 'worker', 'process']);
  });

  it('forbids unknown keys at every level', () => {
    const open: string[] = [];
    walkSubschemas(schema, [], (node, path) => {
      if (node['type'] === 'object' && node['properties'] !== undefined && !path.includes('allOf') && path[path.length - 1] !== 'input' && path[path.length - 1] !== 'output') {
        if (node['additionalProperties'] !== false) open.push(path.join('.'));
      }
    });
    expect(open).toEqual([]);
  });
});
