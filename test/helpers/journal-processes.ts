// Helpers for journal tests that run real host processes: spawn the fixture
// host (which imports the built journal from dist/), read its readiness line,
// wait for exit, and prove no tagged process is left.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { findMarkedProcesses, newMarker } from './proc-scan.js';
import { makeTempParent } from './journal-fixtures.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/audit/journal-host.mjs', import.meta.url));

/** Fails with a clear message when dist/ is missing or older than src/audit (npm test builds first). */
export function assertJournalBuilt(): void {
  const built = `${REPO_ROOT}dist/src/audit/open-journal.js`;
  let builtMs: number;
  try {
    builtMs = statSync(built).mtimeMs;
  } catch {
    throw new Error(`${built} is missing: run \`npm run build\` first (npm test does)`);
  }
  for (const name of readdirSync(`${REPO_ROOT}src/audit`, { recursive: true }) as string[]) {
    if (!name.endsWith('.ts')) continue;
    if (statSync(join(`${REPO_ROOT}src/audit`, name)).mtimeMs > builtMs) {
      throw new Error(`dist/ is older than src/audit/${name}: run \`npm run build\` first (npm test does)`);
    }
  }
}

export interface FixtureHost {
  readonly child: ChildProcess;
  /** The first JSON line the fixture printed. */
  readonly ready: Promise<Record<string, unknown>>;
  /** Later JSON lines, in order. */
  readonly lines: Record<string, unknown>[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the fixture host on journal `url` ('-': the state folder's SQLite); every process is tagged with `marker` in argv. */
export function spawnFixtureHost(mode: string, stateDir: string, marker: string, url: string, rest: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): FixtureHost {
  const child = spawn(process.execPath, [FIXTURE, mode, stateDir, marker, url, ...rest], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const lines: Record<string, unknown>[] = [];
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    const reader = createInterface({ input: child.stdout! });
    reader.on('line', (line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed['ready'] === true) resolve(parsed);
      else lines.push(parsed);
    });
    void exited.then(({ code, signal }) => reject(new Error(`fixture host exited (${code ?? signal}) before ready: ${stderr}`)));
  });
  // The rejection above is only interesting while someone awaits readiness.
  ready.catch(() => {});
  return { child, ready, lines, exited };
}

/** One test's state folder, marker and fixture hosts. */
export interface JournalProcessTest {
  temp: ReturnType<typeof makeTempParent>;
  marker: string;
  readonly hosts: FixtureHost[];
}

/**
 * Per-test state for tests that run fixture processes on a journal: a fresh
 * state folder and marker before each test; after it, every host is killed and
 * awaited, no process with the marker may be left, and the folder goes.
 */
export function useJournalProcessTest(): JournalProcessTest {
  const state = { hosts: [] } as unknown as JournalProcessTest;
  beforeAll(() => assertJournalBuilt());
  beforeEach(() => {
    state.temp = makeTempParent();
    state.marker = newMarker('audit');
  });
  afterEach(async () => {
    for (const host of state.hosts.splice(0)) {
      if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill('SIGKILL');
      await host.exited;
    }
    expect(findMarkedProcesses(state.marker)).toEqual([]);
    state.temp.remove();
  });
  return state;
}
