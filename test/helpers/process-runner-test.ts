// Shared builders for the process runner tests: a RunSpec per fixture, tagged
// with the test's marker in argv and env so /proc scans find every process.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import { createSilentLogger } from '../../src/log.js';
import { createProcessRunner, type ProcessRunnerDeps } from '../../src/runner/process/process-runner.js';
import type { Runner, RunSpec } from '../../src/runner/types.js';
import type { ProcessServices } from '../../src/runner/index.js';
import { newMarker, waitForNoMarkedProcesses } from './proc-scan.js';
import { useProcessServices } from './process-services.js';
import { runSpec } from './run-spec.js';

export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/tools/process/', import.meta.url));

const workdirs: string[] = [];

/** A fresh directory for one test, removed by removeWorkdirs(). */
export function newWorkdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-proc-test-'));
  workdirs.push(dir);
  return dir;
}

export function removeWorkdirs(): void {
  for (const dir of workdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function nodeFixture(name: string, marker: string): string[] {
  return [process.execPath, join(FIXTURES_DIR, name), marker];
}

export function processSpec(marker: string, overrides: Partial<RunSpec>): RunSpec {
  return runSpec({
    name: 'fixture_tool',
    mode: 'process',
    manifestDir: FIXTURES_DIR,
    command: nodeFixture('oneshot.mjs', marker),
    // Node reserves about 1 GiB of address space at startup (RLIMIT_AS comes from memoryMb).
    memoryMb: 2048,
    env: { TOOLHOST_TEST_MARKER: marker },
    ...overrides,
  });
}

export { runOptions } from './run-options.js';

let callCount = 0;
export function job(args: Record<string, unknown>): { callId: string; args: Record<string, unknown> } {
  callCount++;
  return { callId: `call-${callCount}-${randomUUID()}`, args };
}

/** The runner under test and the marker its processes carry, fresh for each test. */
export interface RunnerTest {
  marker: string;
  runner: Runner | undefined;
  /** This file's ProcessServices (spawner, groups, cgroups), closed after its tests. */
  readonly services: ProcessServices;
  /** Starts the test's runner: processSpec(marker, overrides) on `services`, a silent logger unless `deps` gives one; closed after the test. */
  start(overrides?: Partial<RunSpec>, deps?: Partial<ProcessRunnerDeps>): Runner;
}

/**
 * The state of one file's runner tests (call it once, at the top of the file); after each
 * test the runner is closed and no process carrying the marker may be left, workdirs included.
 */
export function useRunnerTest(): RunnerTest {
  const state: RunnerTest = {
    marker: newMarker('proc'),
    runner: undefined,
    services: useProcessServices(),
    start(overrides = {}, deps = {}) {
      state.runner = createProcessRunner(processSpec(state.marker, overrides), { logger: createSilentLogger(), services: state.services, ...deps });
      return state.runner;
    },
  };
  afterEach(async () => {
    await state.runner?.close();
    state.runner = undefined;
    // Survivors are killed and the marker renewed before the check: one failure must not fail every later test.
    const left = await waitForNoMarkedProcesses(state.marker, undefined, { killSurvivors: true });
    state.marker = newMarker('proc');
    removeWorkdirs();
    expect(left).toEqual([]);
  });
  return state;
}
