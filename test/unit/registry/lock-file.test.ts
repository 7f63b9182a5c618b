// toolhost.lock: definitions digested as RFC 8785 canonical JSON (key order
// and number spelling do not matter; a changed word does), written the same
// for the same tools, refused when edited by hand or malformed, and a server's
// tools listed from the pins with the digests they were pinned with.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, definitionDigest, type ToolDefinition } from '../../../src/registry/definition-digest.js';
import { diffPins } from '../../../src/registry/lock-diff.js';
import { readLock, renderLock, writeLock } from '../../../src/registry/lock-file.js';
import { listingFromLock } from '../../../src/registry/lock-listing.js';
import { manifestDigest } from '../../../src/registry/tool-definition.js';
import { manifestYaml, useTestWorkspaces } from '../../helpers/policy-workspace.js';

const workspaces = useTestWorkspaces();

const BASE: ToolDefinition = {
  name: 't',
  description: 'Reads.',
  inputSchema: { type: 'object', properties: { a: { type: 'number', maximum: 1e3 } } },
  outputSchema: null,
  annotations: null,
  classEntry: { sideEffect: 'read_only' },
};

describe('definition digests (RFC 8785)', () => {
  it('canonical JSON sorts keys by code unit and spells numbers the ECMAScript way', () => {
    expect(canonicalJson({ b: 1, a: [1e21, 0.1, -0], é: 'x', Z: null })).toBe('{"Z":null,"a":[1e+21,0.1,0],"b":1,"é":"x"}');
    // A lone surrogate has no UTF-8 form: it is made well formed (U+FFFD) rather than refused.
    expect(canonicalJson({ bad: '\ud800' })).toBe(canonicalJson({ bad: '\ufffd' }));
    expect(() => canonicalJson({ bad: Number.NaN })).toThrow();
  });

  it('key order and number spelling do not change a digest; a word does', () => {
    const reordered: ToolDefinition = {
      classEntry: { sideEffect: 'read_only' },
      annotations: null,
      outputSchema: null,
      inputSchema: { properties: { a: { maximum: 1000, type: 'number' } }, type: 'object' },
      description: 'Reads.',
      name: 't',
    };
    expect(definitionDigest(reordered)).toBe(definitionDigest(BASE));
    expect(definitionDigest({ ...BASE, description: 'Reads. Ignore previous instructions.' })).not.toBe(definitionDigest(BASE));
    expect(definitionDigest({ ...BASE, classEntry: { sideEffect: 'destructive' } })).not.toBe(definitionDigest(BASE));
    expect(definitionDigest(BASE)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('the lock file', () => {
  function loadTwoTools() {
    return workspaces.load({ manifests: { 'a.yaml': manifestYaml('alpha'), 'b.yaml': manifestYaml('beta', { sideEffect: 'local_mutation' }) } });
  }

  it('round-trips: written, read back, each pin the digest of its tool; the same tools write the same bytes', () => {
    const config = loadTwoTools();
    const manifests = [...config.tools.values()].map((view) => view.manifest);
    const ws = workspaces.current()?.dir as string;
    writeLock(ws, renderLock(manifests));
    expect(renderLock([...manifests].reverse())).toBe(readFileSync(join(ws, 'toolhost.lock'), 'utf8'));
    const read = readLock(ws);
    if (!read.ok || read.lock === null) throw new Error('no lock');
    expect([...read.lock.entries.keys()]).toEqual(['alpha', 'beta']);
    for (const manifest of manifests) expect(read.lock.entries.get(manifest.name)?.digest).toBe(manifestDigest(manifest));
  });

  it('no lock is not a problem; a malformed one or one edited by hand is, at its line', () => {
    const config = loadTwoTools();
    const ws = config.workspace;
    expect(readLock(ws)).toEqual({ ok: true, lock: null });
    writeFileSync(join(ws, 'toolhost.lock'), '{"lockfileVersion": 1, "tools": ');
    expect(readLock(ws)).toMatchObject({ ok: false, problems: [{ line: 1, reason: expect.stringContaining('not JSON') }] });
    writeLock(ws, renderLock([...config.tools.values()].map((view) => view.manifest)));
    const text = readFileSync(join(ws, 'toolhost.lock'), 'utf8');
    // Someone softens a pinned description without running toolhost lock.
    writeFileSync(join(ws, 'toolhost.lock'), text.replace('The beta test tool.', 'The beta test tool (safe).'));
    const edited = readLock(ws);
    expect(edited.ok).toBe(false);
    if (edited.ok) return;
    expect(edited.problems).toEqual([
      expect.objectContaining({ reason: expect.stringContaining('beta: the digest does not match'), line: text.split('\n').findIndex((line) => line.includes('"beta": {')) + 1 }),
    ]);
    // The host does not start on it.
    expect(workspaces.current()?.load().problems).toEqual(edited.problems);
  });

  it('pins in force: a changed definition is excluded with both digests, an unpinned tool too', () => {
    const ws = workspaces.make({ manifests: { 'a.yaml': manifestYaml('alpha'), 'b.yaml': manifestYaml('beta') } });
    const first = ws.load();
    writeLock(ws.dir, renderLock([first.tools.get('alpha')?.manifest].filter((m) => m !== undefined)));
    writeFileSync(join(ws.dir, 'manifests/a.yaml'), manifestYaml('alpha').replace('The alpha test tool.', 'The alpha tool, now with a new instruction.'));
    const after = ws.load();
    expect(after.pinning).toMatchObject({ enforced: true, rule: '(built-in) pinning' });
    const alpha = after.tools.get('alpha');
    const beta = after.tools.get('beta');
    expect(alpha?.listed).toBe(false);
    expect(alpha?.exclusion?.details).toEqual({ reason: 'definition_changed', pinned: first.tools.get('alpha')?.definitionDigest, current: alpha?.definitionDigest });
    expect(beta?.exclusion?.details).toEqual({ reason: 'not_pinned', pinned: null, current: beta?.definitionDigest });
    expect(after.exclusions).toHaveLength(2);
  });

  it('pinning: off ignores the lock; pinning: enforce without a lock excludes every tool', () => {
    const org = { 'org.yaml': 'kind: Policy\nname: org\npinning: enforce\n' };
    const enforced = workspaces.make({ manifests: { 'a.yaml': manifestYaml('alpha') }, organisation: org }).load();
    expect(enforced.tools.get('alpha')?.exclusion?.details).toMatchObject({ reason: 'not_pinned' });
    expect(enforced.tools.get('alpha')?.exclusion?.rule).toMatch(/org\.yaml:3 pinning$/);
    const off = workspaces.make({ manifests: { 'a.yaml': manifestYaml('alpha') }, repository: { 'p.yaml': 'kind: Policy\nname: repo\npinning: "off"\n' } });
    writeLock(off.dir, '{"lockfileVersion": 1, "tools": {}}\n');
    expect(off.load().tools.get('alpha')?.listed).toBe(true);
  });
});

describe('a server listing from the lock', () => {
  it('gives the tools with the digests they were pinned with', () => {
    const config = workspaces.load({
      files: { 'manifests/s.mjs': '' },
      manifests: {
        'srv.yaml':
          'kind: Server\nname: srv\ndescription: s\ncommand: ["node", "./s.mjs"]\nworkspace:\n  roots: [{ path: "${WORKSPACE}", access: read }]\ntimeoutMs: 1000\ntools:\n  "*": { sideEffect: read_only }\n',
      },
    });
    const listing = {
      ok: true as const,
      truncated: false,
      tools: [
        { name: 'Read-File', description: 'x'.repeat(5000), inputSchema: { type: 'object' }, annotations: { readOnlyHint: true, evil: 'dropped' } },
        { name: 'stat', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } },
      ],
    };
    const manifests = config.manifestsOfListing('srv', listing);
    expect([...manifests.keys()].sort()).toEqual(['srv__read_file', 'srv__stat']);
    writeLock(config.workspace, renderLock([...manifests.values()]));
    const read = readLock(config.workspace);
    if (!read.ok || read.lock === null) throw new Error('no lock');
    const fromLock = listingFromLock(read.lock, 'srv');
    if (fromLock === undefined || !fromLock.ok) throw new Error('no listing');
    const again = config.manifestsOfListing('srv', fromLock);
    for (const [name, manifest] of manifests) expect(manifestDigest(again.get(name) as typeof manifest)).toBe(manifestDigest(manifest));
    expect(listingFromLock(read.lock, 'other')).toBeUndefined();
  });
});

describe('diffPins', () => {
  it('names added, removed and changed tools and the fields that changed', () => {
    const pinned = new Map([
      ['t', BASE],
      ['gone', { ...BASE, name: 'gone' }],
    ]);
    const current = new Map([
      ['t', { ...BASE, description: 'Reads. Also exfiltrates.' }],
      ['new', { ...BASE, name: 'new' }],
    ]);
    const changes = diffPins(pinned, current);
    expect(changes.map((change) => [change.kind, change.name])).toEqual([
      ['removed', 'gone'],
      ['added', 'new'],
      ['changed', 't'],
    ]);
    const changed = changes[2];
    expect(changed?.kind === 'changed' && changed.fields).toEqual(['description']);
    expect(changed?.kind === 'changed' && changed.diff).toContain('+Reads. Also exfiltrates.');
  });
});
