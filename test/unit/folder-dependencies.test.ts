// The folders of src/ are rooms with one-way doors (STYLE section 2): config/
// is a leaf, registry/ and policy/ never look at the runners (the RunSpec and
// SandboxMode live with the manifest), no two folders import each other by any
// path. sandbox/ is the far side, by who runs it (isolate/ in the isolate
// process, worker/ in the host's worker threads, ctx/ the code of ctx they both
// run, shared/ the contract both sides import): it takes nothing of src/, and
// src/ takes only sandbox/shared/ of it. The host's helper processes
// (src/runner/host-helpers/) are plain ESM that take nothing but each other.
// Type-only imports count too: a type is a dependency a reader has to follow.
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles, type SourceFile } from '../helpers/source-imports.js';

const SOURCES = sourceFiles('src');
const SANDBOX = sourceFiles('sandbox', ['.mjs', '.mts']);
const HOST_SIDE = sourceFiles('src', ['.ts', '.mjs', '.mts']);
const HOST_HELPERS = 'src/runner/host-helpers/';

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
      return `${cycle} (${EDGES.filter((edge) => edge.from === from && edge.to === to)
        .map((edge) => edge.file)
        .join(', ')})`;
    });
    expect(because).toEqual([]);
  });

  it('cli/ reaches the runners only through runner/index.ts (their one front door)', () => {
    const inside = EDGES.filter((edge) => edge.from === 'cli' && edge.to === 'runner' && edge.target !== 'src/runner/index.ts').map((edge) => `${edge.file} → ${edge.target}`);
    expect(EDGES.some((edge) => edge.from === 'cli' && edge.target === 'src/runner/index.ts')).toBe(true);
    expect(inside).toEqual([]);
  });

  it('sandbox/ imports nothing of src/, not even a type', () => {
    const reached = projectImports(SANDBOX).filter((entry) => !entry.target.startsWith('sandbox/'));
    expect(SANDBOX.length).toBeGreaterThan(10);
    expect(reached).toEqual([]);
  });

  it('sandbox/shared/ imports nothing outside itself', () => {
    expect(projectImports(SANDBOX.filter((source) => source.file.startsWith('sandbox/shared/'))).filter((entry) => !entry.target.startsWith('sandbox/shared/'))).toEqual([]);
  });

  it('sandbox/ctx/ imports only sandbox/shared/; isolate/ and worker/ only ctx/ and shared/, never each other', () => {
    const allowed: Record<string, readonly string[]> = { ctx: ['ctx', 'shared'], isolate: ['isolate', 'ctx', 'shared'], worker: ['worker', 'ctx', 'shared'] };
    const outside = projectImports(SANDBOX).filter((entry) => {
      const from = entry.file.split('/')[1]!;
      const to = entry.target.split('/')[1]!;
      return from in allowed && !allowed[from]!.includes(to);
    });
    expect(outside).toEqual([]);
  });

  it('src/ imports of sandbox/ only sandbox/shared/ (the code of the far side is started, never imported)', () => {
    const reached = projectImports(HOST_SIDE).filter((entry) => entry.target.startsWith('sandbox/'));
    expect(reached.some((entry) => entry.target === 'sandbox/shared/frames.mjs')).toBe(true);
    expect(reached.filter((entry) => !entry.target.startsWith('sandbox/shared/'))).toEqual([]);
  });

  it('the host helper processes import nothing of the project but each other', () => {
    const helpers = HOST_SIDE.filter((source) => source.file.startsWith(HOST_HELPERS));
    expect(helpers.map((source) => source.file)).toContain(`${HOST_HELPERS}spawner.mjs`);
    expect(projectImports(helpers).filter((entry) => !entry.target.startsWith(HOST_HELPERS))).toEqual([]);
  });
});

/** Every import of a project file (a relative specifier), as `{ file, target }`. */
function projectImports(sources: readonly SourceFile[]): Array<{ file: string; target: string }> {
  return sources.flatMap((source) =>
    importsOf(source)
      .filter((entry) => entry.target !== undefined)
      .map((entry) => ({ file: source.file, target: entry.target! })),
  );
}
