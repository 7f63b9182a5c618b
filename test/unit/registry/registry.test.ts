import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifests } from '../../../src/registry/load-manifests.js';
import { Registry } from '../../../src/registry/registry.js';

const REPO = realpathSync(fileURLToPath(new URL('../../../', import.meta.url)));

describe('Registry', () => {
  const { manifests, problems } = loadManifests({ dirs: ['test/fixtures/manifests/good'], workspace: REPO, cwd: REPO });

  it('looks tools up by name and lists names sorted', () => {
    expect(problems).toEqual([]);
    const registry = new Registry(manifests);
    expect(registry.names()).toEqual(['counter', 'local_refs', 'mystery_tool', 'plain_tool']);
    expect(registry.all().map((manifest) => manifest.name)).toEqual(registry.names());
    expect(registry.lookup('counter')?.sandbox.mode).toBe('process');
    expect(registry.lookup('missing')).toBeUndefined();
    // Inherited object keys are not tools.
    expect(registry.lookup('constructor')).toBeUndefined();
    expect(registry.lookup('__proto__')).toBeUndefined();
  });

  it('refuses two manifests with one name', () => {
    const first = manifests[0];
    expect(first).toBeDefined();
    if (!first) return;
    expect(() => new Registry([first, first])).toThrow(`duplicate tool name "${first.name}"`);
  });

  it('is empty without manifests', () => {
    const registry = new Registry([]);
    expect(registry.names()).toEqual([]);
    expect(registry.all()).toEqual([]);
  });
});
