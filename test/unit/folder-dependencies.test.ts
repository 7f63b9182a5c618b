// The folders of src/ are rooms with one-way doors (STYLE section 2): config/
// is a leaf, registry/ and policy/ never look at the runners (the RunSpec and
// SandboxMode live with the manifest), no two folders import each other by any
// path, and sandbox/ (the far side) takes nothing of src/ at runtime. Type-only
// imports count too: a type is a dependency a reader has to follow.
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles, type SourceFile } from '../helpers/source-imports.js';

const SOURCES = sourceFiles('src');
const SANDBOX = sourceFiles('sandbox', ['.mjs', '.mts']);

/** `src/policy/views.ts` → `policy`; a file at src/'s top (`src/host.ts`) is a room of its own (`host`). */
function folderOf(file: string): string {
  const parts = file.replace(/^src\//, '').split('/');
  return parts.length === 1 ? parts[0]!.replace(/\.ts$/, '') : parts[0]!;
}

/** Every import of a project file under src/ that leaves its folder, as `file → target`. */
function crossings(sources: readonly SourceFile[]): Array<{ file: string; from: string; to: string; target: string }> {
  return sources.flatMap((source) =>
    importsOf(source)
      .filter((entry) => entry.target?.startsWith('src/') === true)
      .map((entry) => ({ file: source.file, from: folderOf(source.file), to: folderOf(entry.target!), target: entry.target! }))
      .filter((edge) => edge.from !== edge.to),
  );
}

const EDGES = crossings(SOURCES);

/** The imports of `folder` that reach a folder outside `allowed`, as `file → target`. */
function outsideOf(folder: string, allowed: readonly string[]): string[] {
  return EDGES.filter((edge) => edge.from === folder && !allowed.includes(edge.to)).map((edge) => `${edge.file} → ${edge.target}`);
}

describe('folder dependencies', () => {
  it('reads the project (a sanity check of the scan itself)', () => {
    expect(SOURCES.length).toBeGreaterThan(100);
    expect(EDGES).toContainEqual(expect.objectContaining({ file: 'src/policy/views.ts', to: 'registry', target: 'src/registry/run-spec.ts' }));
    expect(EDGES).toContainEqual(expect.objectContaining({ file: 'src/supervisor/supervisor.ts', to: 'policy' }));
  });

  it('config/ is a leaf: it imports nothing of the project outside itself', () => {
    expect(outsideOf('config', [])).toEqual([]);
  });

  it('registry/ imports only config/, errors and log', () => {
    expect(outsideOf('registry', ['config', 'errors', 'log'])).toEqual([]);
  });

  it('policy/ imports only registry/, config/, errors and log (never a runner type)', () => {
    expect(outsideOf('policy', ['registry', 'config', 'errors', 'log'])).toEqual([]);
  });

  it('telemetry/ sits below the supervisor: it imports only log', () => {
    expect(outsideOf('telemetry', ['log'])).toEqual([]);
  });

  it('no two folders of src/ reach each other: the folder graph has no cycle', () => {
    const next = new Map<string, Set<string>>();
    for (const edge of EDGES) next.set(edge.from, (next.get(edge.from) ?? new Set()).add(edge.to));
    const cycles = new Set<string>();
    const done = new Set<string>();
    // Depth-first with the current path: a folder met again on the path closes a cycle.
    const visit = (folder: string, path: string[]): void => {
      const seen = path.indexOf(folder);
      if (seen !== -1) {
        cycles.add([...path.slice(seen), folder].join(' → '));
        return;
      }
      if (done.has(folder)) return;
      for (const to of next.get(folder) ?? []) visit(to, [...path, folder]);
      done.add(folder);
    };
    for (const folder of next.keys()) visit(folder, []);
    // Name the files behind each cycle's first step, so a failure says what to move.
    const because = [...cycles].map((cycle) => {
      const [from, to] = cycle.split(' → ');
      return `${cycle} (${EDGES.filter((edge) => edge.from === from && edge.to === to).map((edge) => edge.file).join(', ')})`;
    });
    expect(because).toEqual([]);
  });

  it('cli/ reaches the runners only through runner/index.ts (their one front door)', () => {
    const inside = EDGES.filter((edge) => edge.from === 'cli' && edge.to === 'runner' && edge.target !== 'src/runner/index.ts').map((edge) => `${edge.file} → ${edge.target}`);
    expect(EDGES.some((edge) => edge.from === 'cli' && edge.target === 'src/runner/index.ts')).toBe(true);
    expect(inside).toEqual([]);
  });

  it('sandbox/ imports nothing of src/ at runtime, and only the wire types from src/runner/wire.ts', () => {
    const reached = SANDBOX.flatMap((source) =>
      importsOf(source)
        .filter((entry) => entry.target !== undefined && !entry.target.startsWith('sandbox/'))
        .map((entry) => ({ file: source.file, target: entry.target!, typeOnly: entry.typeOnly })),
    );
    expect(reached.filter((entry) => !entry.typeOnly)).toEqual([]);
    expect(new Set(reached.map((entry) => entry.target))).toEqual(new Set(['src/runner/wire.ts']));
  });
});
