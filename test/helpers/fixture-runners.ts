// Builds RunSpec objects and call options for the isolate and worker runner tests.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { createSilentLogger } from '../../src/log.js';
import { createIsolateRunner } from '../../src/runner/isolate/isolate-runner.js';
import { createWorkerRunner } from '../../src/runner/worker/worker-runner.js';
import type { Runner, RunSpec, SandboxMode, WorkspaceRoot } from '../../src/runner/types.js';
import type { ProgressEvent, RunOptions, SandboxDenial, ToolLogLevel } from '../../src/runner/run-types.js';
import { runOptions } from './run-options.js';
import { runSpec } from './run-spec.js';
import { useProcessServices } from './process-services.js';

const services = useProcessServices();

const FIXTURES = fileURLToPath(new URL('../fixtures/tools/', import.meta.url));

export function fixturePath(mode: 'isolate' | 'worker', file: string): string {
  return path.join(FIXTURES, mode, file);
}

export function makeSpec(mode: SandboxMode, file: string, overrides: Partial<Omit<RunSpec, 'mode'>> = {}): RunSpec {
  const entryPath = fixturePath(mode === 'worker' ? 'worker' : 'isolate', file);
  return Object.freeze(runSpec({ name: path.basename(file, '.mjs').replaceAll('-', '_'), mode, manifestDir: path.dirname(entryPath), entryPath, memoryMb: 32, ...overrides }));
}

/** Call options that record what the runner reported. */
export interface RecordingOptions extends RunOptions {
  readonly progress: ProgressEvent[];
  readonly logs: Array<{ level: ToolLogLevel; message: string }>;
  readonly denials: SandboxDenial[];
  readonly controller: AbortController;
}

/**
 * `timeoutMs` only bounds a failure unless the test is about the deadline (then it passes its
 * own): a first call also starts the worker thread or isolate process, which takes seconds
 * on a loaded machine.
 */
export function recordingOptions(timeoutMs = 30_000): RecordingOptions {
  const controller = new AbortController();
  const progress: ProgressEvent[] = [];
  const logs: Array<{ level: ToolLogLevel; message: string }> = [];
  const denials: SandboxDenial[] = [];
  return {
    ...runOptions({ signal: controller.signal, timeoutMs }),
    controller,
    progress,
    logs,
    denials,
    onProgress: (event) => progress.push(event),
    onLog: (level, message) => logs.push({ level, message }),
    onDenied: (denial) => denials.push(denial),
  };
}

export function root(dir: string, access: WorkspaceRoot['access']): WorkspaceRoot {
  return { path: dir, access };
}

/** Returns `track`: every runner passed to it is closed after each test. */
export function useRunnerCleanup(): <R extends Runner>(runner: R) => R {
  const runners: Runner[] = [];
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((runner) => runner.close()));
  });
  return (runner) => {
    runners.push(runner);
    return runner;
  };
}

/**
 * A runner of `mode` for a fixture file of tools/<mode>/, closed after each test;
 * `defaults` go under each call's overrides (a worker's heap, say).
 */
export function useFixtureRunners(mode: 'isolate' | 'worker', defaults: Partial<Omit<RunSpec, 'mode'>> = {}): (file: string, overrides?: Partial<Omit<RunSpec, 'mode'>>) => Runner {
  const track = useRunnerCleanup();
  const logger = createSilentLogger();
  return (file, overrides = {}) => {
    const spec = makeSpec(mode, file, { ...defaults, ...overrides });
    return track(mode === 'isolate' ? createIsolateRunner(spec, { logger, services }) : createWorkerRunner(spec, { logger }));
  };
}
